package syndic

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func writeConf(t *testing.T, master, minion string) string {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "master"), []byte(master), 0o600)
	os.WriteFile(filepath.Join(dir, "minion"), []byte(minion), 0o600)
	return dir
}

// TestLoadConfig pins syndic_config's merge (salt/config/__init__.py).
func TestLoadConfig(t *testing.T) {
	for _, tc := range []struct {
		name, master, minion string
		uppers               []string
		check                func(t *testing.T, c *Config)
	}{
		{"defaults", "cachedir: /c\nsock_dir: /s\n", "id: syn1\n", []string{"masterofmasters:4506"}, func(t *testing.T, c *Config) {
			if c.Wait != 5*time.Second || c.EventForwardTimeout != 500*time.Millisecond || c.JIDForwardCacheHWM != 100 ||
				c.Failover != "random" || c.Mode != "sync" || c.LogFile != "/var/log/salt/syndic" {
				t.Errorf("defaults: %+v", c)
			}
			if c.Local.CacheDir != "/c" || c.Local.LocalSocket() != "/s/brine-master.sock" {
				t.Errorf("local master: %s %s", c.Local.CacheDir, c.Local.LocalSocket())
			}
		}},
		{"master_port from the minion file", "syndic_master: top\n", "id: syn1\nmaster_port: 5506\n", []string{"top:5506"}, nil},
		{"syndic_master_port wins", "syndic_master: top\nsyndic_master_port: 6506\n", "id: syn1\nmaster_port: 5506\n", []string{"top:6506"}, nil},
		{"multi-syndic and host:port", "syndic_master: [a, 'b:7000']\nsyndic_failover: ordered\nsyndic_wait: 1\nsyndic_event_forward_timeout: 0.1\n",
			"id: syn1\npki_dir: /p\n", []string{"a:4506", "b:7000"}, func(t *testing.T, c *Config) {
				if c.Failover != "ordered" || c.Wait != time.Second || c.EventForwardTimeout != 100*time.Millisecond {
					t.Errorf("options: %+v", c)
				}
				if c.Minion.PKIDir != "/p" || c.ID != "syn1" {
					t.Errorf("pki_dir and id come from the minion file: %s %s", c.Minion.PKIDir, c.ID)
				}
			}},
		{"master_id, read as text", "master_id: 7\n", "id: syn1\n", []string{"masterofmasters:4506"}, func(t *testing.T, c *Config) {
			if c.Local.MasterID != "7" {
				t.Errorf("master_id %q", c.Local.MasterID)
			}
		}},
		{"the minion file overrides the master file", "syndic_master: a\n", "id: syn1\nsyndic_master: b\n", []string{"b:4506"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := LoadConfig(writeConf(t, tc.master, tc.minion), nil)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.uppers, c.Uppers); d != "" {
				t.Errorf("uppers (-want +got):\n%s", d)
			}
			if tc.check != nil {
				tc.check(t, c)
			}
		})
	}
}

func TestLoadConfigErrors(t *testing.T) {
	for _, tc := range []struct{ master, minion, want string }{
		{"syndic_failover: sideways\n", "id: s\n", "syndic_failover is random or ordered"},
		{"syndic_mode: solo\n", "id: s\n", "syndic_mode is sync or cluster"},
		{"syndic_event_forward_timeout: 0\n", "id: s\n", "must be more than 0"},
		{"syndic_master: [a, 3]\n", "id: s\n", "is not a host name"},
		{"", "", "needs an id"},
	} {
		dir := writeConf(t, tc.master, tc.minion)
		_, err := LoadConfig(dir, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), dir) {
			t.Errorf("%q/%q: err %v, want %q naming the file", tc.master, tc.minion, err, tc.want)
		}
	}
}

func TestSelfLoop(t *testing.T) {
	c, err := LoadConfig(writeConf(t, "interface: 127.0.0.1\nret_port: 4999\nsyndic_master: 127.0.0.1:4999\n", "id: s\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := selfLoop(c); err == nil || !strings.Contains(err.Error(), "own master") {
		t.Fatalf("selfLoop = %v", err)
	}
	c.Uppers = []string{"127.0.0.1:5000"}
	if err := selfLoop(c); err != nil {
		t.Fatalf("another port is not a loop: %v", err)
	}
}
