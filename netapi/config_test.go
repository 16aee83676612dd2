package netapi

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/saltyaml"
)

func loadYAML(t *testing.T, s string) *ordered.Map {
	t.Helper()
	v, err := saltyaml.Load([]byte(s), "master")
	if err != nil {
		t.Fatal(err)
	}
	return v.(*ordered.Map)
}

func TestParseConfig(t *testing.T) {
	dir := t.TempDir()
	crt := filepath.Join(dir, "c.pem")
	os.WriteFile(crt, []byte("x"), 0o600)
	c, warns, err := ParseConfig(loadYAML(t, `
rest_cherrypy:
  port: "8000"
  ssl_crt: `+crt+`
  ssl_key: `+crt+`
  thread_pool: 7
  socket_queue_size: 3
  webhook_disable_auth: True
  app: /srv/app/index.html
  no_such_key: 1
netapi_enable_clients: [local, runner]
rosters: /etc/salt/rosters
`))
	if err != nil {
		t.Fatal(err)
	}
	if c.Port != 8000 || c.ThreadPool != 7 || c.SocketQueueSize != 3 || !c.WebhookDisableAuth || !c.HasApp ||
		c.AppPath != "/app" || strings.Join(c.EnableClients, ",") != "local,runner" || c.Rosters[0] != "/etc/salt/rosters" {
		t.Errorf("config %+v", c)
	}
	if len(warns) != 1 || !strings.Contains(warns[0], `"no_such_key"`) {
		t.Errorf("warnings %v", warns)
	}
	for conf, want := range map[string]string{
		"rest_cherrypy: {ssl_crt: x}":                             "'port' not specified",
		"rest_cherrypy: {port: 8000}":                             "'ssl_crt' and 'ssl_key' are required",
		"rest_cherrypy: {port: 8000, ssl_crt: /no, ssl_key: /no}": "could not find a certificate: /no",
		"other: 1": "no rest_cherrypy section",
	} {
		if _, _, err := ParseConfig(loadYAML(t, conf)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", conf, err, want)
		}
	}
	c, _, err = ParseConfig(loadYAML(t, "rest_cherrypy: {port: 8000, disable_ssl: True}"))
	if err != nil || len(c.EnableClients) != 0 {
		t.Errorf("no netapi_enable_clients enables nothing: %v %v", c.EnableClients, err)
	}
}

func TestRedactedURI(t *testing.T) {
	for in, want := range map[string]string{
		"/events?token=abc&x=1":      "/events?token=***&x=1",
		"/events?salt_token=abc":     "/events?salt_token=***",
		"/ws/0123abcd?format_events": "/ws/***?format_events",
		"/login":                     "/login",
		"/x?Password=p":              "/x?Password=***",
	} {
		u, _ := url.Parse(in)
		if got := redactedURI(u); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}
