package main

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/brinesalt/brine/internal/config"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/saltyaml"
	"github.com/brinesalt/brine/roster"
	"github.com/google/go-cmp/cmp"
)

func TestRosterExtras(t *testing.T) {
	master := func(src string) *config.Master {
		m := config.DefaultMaster("/etc/salt")
		v, err := saltyaml.Load([]byte(src), "master")
		if err != nil {
			t.Fatal(err)
		}
		if v != nil {
			m.Raw = v.(*ordered.Map)
		}
		if ng, ok := m.Raw.Value("nodegroups").(*ordered.Map); ok {
			m.Nodegroups = ng
		}
		return m
	}
	conf := "roster: ansible\nssh_scan_ports: [22, 2222]\nssh_scan_timeout: 0.5\nssh_update_roster: True\nssh_remote_port_forwards: 8080:localhost:80\nnodegroups:\n  web: 'web*'\n"
	tests := []struct {
		name, conf string
		argv       []string
		want       string
	}{
		{"defaults", "", nil, "flat 22 10ms false  map[]"},
		{"config", conf, nil, "ansible 22,2222 500ms true 8080:localhost:80 map[web:web*]"},
		{"flags win", conf, []string{"--roster", "flat", "--scan-ports", "2200", "--scan-timeout", "1", "--update-roster=false", "--remote-port-forwards", "1:h:2"},
			"flat 2200 1s false 1:h:2 map[web:web*]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(config.SaltfileEnv, "")
			o, err := parseArgs(append(tc.argv, "*", "test.ping"), nil)
			if err != nil {
				t.Fatal(err)
			}
			var rc roster.Config
			if err := rosterExtras(&rc, master(tc.conf), o); err != nil {
				t.Fatal(err)
			}
			got := o.roster + " " + rc.ScanPorts + " " + rc.ScanTimeout.String() + " " +
				strconv.FormatBool(rc.UpdateRoster) + " " + rc.Options.RemotePortForwards + " " + fmt.Sprint(rc.Nodegroups)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
	o, _ := parseArgs([]string{"--scan-timeout", "0", "*", "test.ping"}, nil)
	if err := rosterExtras(&roster.Config{}, master(""), o); err == nil {
		t.Error("--scan-timeout 0: no error")
	}
}
