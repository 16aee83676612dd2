package roster

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
)

// TestMineFunctionsWarnedOncePerRoster: mine_functions is read but not
// acted on yet, so each roster that sets it says so once, naming its
// hosts, whether the key is an entry's own or from roster_defaults.
func TestMineFunctionsWarnedOncePerRoster(t *testing.T) {
	mine := "  mine_functions:\n    network.ip_addrs: [eth0]\n"
	cases := []struct {
		name, src string
		defaults  *ordered.Map
		want      string // hosts named, "" for no warning
	}{
		{"two entries", "web1:\n  host: 10.0.0.1\n" + mine + "web2:\n  host: 10.0.0.2\n" + mine + "db1: 10.0.0.3\n", nil, "web1, web2"},
		{"roster_defaults", "web1: 10.0.0.1\nweb2: 10.0.0.2\n",
			ordered.FromPairs("mine_functions", ordered.FromPairs("test.ping", []any{})), "web1, web2"},
		{"none", "web1: 10.0.0.1\n", nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var logs bytes.Buffer
			cfg := testConfig()
			cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
			if c.defaults != nil {
				cfg.RosterDefaults = c.defaults
			}
			if _, err := ParseFlat(context.Background(), []byte(c.src), "/etc/salt/roster", cfg); err != nil {
				t.Fatal(err)
			}
			n := strings.Count(logs.String(), "mine_functions is not supported yet")
			if c.want == "" {
				if n != 0 {
					t.Errorf("warned without mine_functions:\n%s", logs.String())
				}
				return
			}
			if n != 1 || !strings.Contains(logs.String(), `hosts="`+c.want+`"`) || !strings.Contains(logs.String(), "file=/etc/salt/roster") {
				t.Errorf("want one warning naming %s in /etc/salt/roster, got:\n%s", c.want, logs.String())
			}
		})
	}
}

func TestMineFunctionsWarnedAnsible(t *testing.T) {
	var logs bytes.Buffer
	cfg := testConfig()
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	cfg.RosterDefaults = ordered.FromPairs("mine_functions", ordered.FromPairs("test.ping", []any{}))
	inv, err := ParseAnsibleINI([]byte("web1\nweb2\n"), "/etc/ansible/hosts")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewAnsible(inv, cfg); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(logs.String(), "mine_functions is not supported yet"); n != 1 {
		t.Errorf("want one warning, got:\n%s", logs.String())
	}
}
