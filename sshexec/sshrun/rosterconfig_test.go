package sshrun

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
		s          Settings
		want       string
	}{
		{"defaults", "", Settings{}, "flat 22 10ms false  map[]"},
		{"config", conf, Settings{}, "ansible 22,2222 500ms true 8080:localhost:80 map[web:web*]"},
		{"flags win", conf, Settings{Roster: "flat", ScanPorts: "2200", ScanTimeout: 1, RemotePortForwards: "1:h:2",
			Set: map[string]bool{"roster": true, "scan-ports": true, "scan-timeout": true, "update-roster": true, "remote-port-forwards": true}},
			"flat 2200 1s false 1:h:2 map[web:web*]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.s
			if s.Roster == "" {
				s.Roster, s.ScanPorts, s.ScanTimeout = "flat", "22", 0.01
			}
			if s.Set == nil {
				s.Set = map[string]bool{}
			}
			var rc roster.Config
			if err := rosterExtras(&rc, master(tc.conf), &s); err != nil {
				t.Fatal(err)
			}
			got := s.Roster + " " + rc.ScanPorts + " " + rc.ScanTimeout.String() + " " +
				strconv.FormatBool(rc.UpdateRoster) + " " + rc.Options.RemotePortForwards + " " + fmt.Sprint(rc.Nodegroups)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
	zero := Settings{ScanTimeout: 0, Set: map[string]bool{"scan-timeout": true}}
	if err := rosterExtras(&roster.Config{}, master(""), &zero); err == nil {
		t.Error("--scan-timeout 0: no error")
	}
}
