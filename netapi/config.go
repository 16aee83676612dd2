package netapi

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
)

// Config is salt-api's configuration: the master config's
// rest_cherrypy section (salt/netapi/rest_cherrypy/app.py's docstring
// and API.get_conf) and the master options NetapiClient reads.
type Config struct {
	Port int
	Host string
	// TLS: HTTPS unless DisableSSL; SSLChain, when set, is served after
	// the certificate.
	SSLCrt, SSLKey, SSLChain string
	DisableSSL               bool
	// Debug puts the error into 500 bodies, as Salt puts the traceback.
	Debug bool
	// LogAccessFile and LogErrorFile are CherryPy's access and error logs.
	LogAccessFile, LogErrorFile string
	WebhookURL                  string
	WebhookDisableAuth          bool
	CollectStats                bool
	StatsDisableAuth            bool
	// Static is a directory served under StaticPath.
	Static, StaticPath string
	// App is a file served under AppPath, and for GET of any other path
	// to browsers asking for text/html (html_override_tool); HasApp says
	// whether it was set.
	App, AppPath string
	HasApp       bool
	Favicon      string
	RootPrefix   string
	// ExpireResponses bounds a request's work by ResponseTimeout
	// (CherryPy's timeout monitor and its response.timeout of 300 s).
	ExpireResponses    bool
	MaxRequestBodySize int64
	// ThreadPool is how many requests are handled at once and
	// SocketQueueSize how many more may wait for a slot (see
	// limiter).
	ThreadPool, SocketQueueSize int
	EnableSessions              bool
	// APIACL is rest_cherrypy's api_acl users: user -> allowed IPs.
	APIACL map[string][]string
	// AuthorizedIPs, when set, is the only client addresses allowed.
	AuthorizedIPs []string

	// EnableClients is netapi_enable_clients (Salt 3006: none when
	// missing or empty); AllowRawShell is netapi_allow_raw_shell.
	EnableClients []string
	AllowRawShell bool
	// Rosters are the directories a roster_file of the ssh client must
	// be in (the master's rosters option).
	Rosters []string
}

// ResponseTimeout is CherryPy's default response.timeout, the limit
// expire_responses enforces.
const ResponseTimeout = 300 * time.Second

// DefaultConfig is rest_cherrypy's defaults (port has none).
func DefaultConfig() Config {
	return Config{Host: "0.0.0.0", WebhookURL: "/hook", StaticPath: "/static", App: "index.html", AppPath: "/app",
		RootPrefix: "/", ExpireResponses: true, MaxRequestBodySize: 1048576, ThreadPool: 100, SocketQueueSize: 30,
		EnableSessions: true}
}

// knownKeys are the rest_cherrypy keys Config reads; queue_size is the
// key Salt's get_conf actually reads for socket_queue_size.
var knownKeys = []string{"port", "host", "debug", "log_access_file", "log_error_file", "ssl_crt", "ssl_key",
	"ssl_chain", "disable_ssl", "webhook_disable_auth", "webhook_url", "thread_pool", "socket_queue_size",
	"queue_size", "expire_responses", "max_request_body_size", "collect_stats", "stats_disable_auth", "static",
	"static_path", "enable_sessions", "app", "app_path", "root_prefix", "favicon", "api_acl", "authorized_ips"}

// ErrNoSection is a master config without a rest_cherrypy section.
var ErrNoSection = errors.New("no rest_cherrypy section in the master config: nothing to serve")

// ParseConfig reads Config from the master config; warnings name the
// rest_cherrypy keys Brine does not know, which are kept but unused.
func ParseConfig(raw *ordered.Map) (Config, []string, error) {
	c := DefaultConfig()
	sec, ok := raw.Value("rest_cherrypy").(*ordered.Map)
	if !ok {
		return c, nil, ErrNoSection
	}
	var warnings []string
	sec.Range(func(k, _ any) bool {
		if key := ordered.KeyString(k); !slices.Contains(knownKeys, key) {
			warnings = append(warnings, fmt.Sprintf("rest_cherrypy: option %q is not supported by Brine's salt-api and is ignored", key))
		}
		return true
	})
	r := reader{m: sec}
	c.Port = r.int("port", 0)
	if !sec.Has("port") || c.Port <= 0 || c.Port > 65535 {
		r.fail(fmt.Errorf("rest_cherrypy: 'port' not specified in config"))
	}
	c.Host = r.str("host", c.Host)
	c.SSLCrt, c.SSLKey, c.SSLChain = r.str("ssl_crt", ""), r.str("ssl_key", ""), r.str("ssl_chain", "")
	c.DisableSSL, c.Debug = r.bool("disable_ssl", false), r.bool("debug", false)
	c.LogAccessFile, c.LogErrorFile = r.str("log_access_file", ""), r.str("log_error_file", "")
	c.WebhookURL = r.str("webhook_url", c.WebhookURL)
	c.WebhookDisableAuth = r.bool("webhook_disable_auth", false)
	c.CollectStats, c.StatsDisableAuth = r.bool("collect_stats", false), r.bool("stats_disable_auth", false)
	c.Static, c.StaticPath = r.str("static", ""), r.str("static_path", c.StaticPath)
	c.HasApp = sec.Has("app")
	c.App, c.AppPath = r.str("app", c.App), r.str("app_path", c.AppPath)
	c.Favicon, c.RootPrefix = r.str("favicon", ""), r.str("root_prefix", c.RootPrefix)
	c.ExpireResponses = r.bool("expire_responses", true)
	c.MaxRequestBodySize = int64(r.int("max_request_body_size", int(c.MaxRequestBodySize)))
	c.ThreadPool = r.int("thread_pool", c.ThreadPool)
	c.SocketQueueSize = r.int("queue_size", r.int("socket_queue_size", c.SocketQueueSize))
	c.EnableSessions = r.bool("enable_sessions", true)
	c.APIACL = r.acl()
	c.AuthorizedIPs = r.strings("authorized_ips")
	top := reader{m: ordered.FromPairs("netapi_enable_clients", raw.Value("netapi_enable_clients"),
		"netapi_allow_raw_shell", raw.Value("netapi_allow_raw_shell"), "rosters", raw.Value("rosters"))}
	c.EnableClients = top.strings("netapi_enable_clients")
	c.AllowRawShell = top.bool("netapi_allow_raw_shell", false)
	c.Rosters = top.strings("rosters")
	r.fail(top.err)
	if c.ThreadPool < 1 {
		r.fail(fmt.Errorf("rest_cherrypy: thread_pool %d: want at least 1", c.ThreadPool))
	}
	if err := c.checkTLS(); err != nil {
		r.fail(err)
	}
	return c, warnings, r.err
}

// checkTLS is rest_cherrypy's start(): without disable_ssl both
// ssl_crt and ssl_key are required and must exist (verify_certs).
func (c Config) checkTLS() error {
	if c.DisableSSL {
		return nil
	}
	if c.SSLCrt == "" || c.SSLKey == "" {
		return errors.New("rest_cherrypy: options 'ssl_crt' and 'ssl_key' are required if SSL is not disabled (disable_ssl: True serves plain HTTP)")
	}
	for _, p := range []string{c.SSLCrt, c.SSLKey, c.SSLChain} {
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("could not find a certificate: %s\nIf you want to quickly generate a self-signed certificate, use the tls.create_self_signed_cert function in Salt", p)
		}
	}
	return nil
}

// reader reads typed values from a config mapping, keeping the first
// error.
type reader struct {
	m   *ordered.Map
	err error
}

func (r *reader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

func (r *reader) str(key, def string) string {
	v, ok := r.m.Get(key)
	if !ok || v == nil {
		return def
	}
	switch x := v.(type) {
	case string:
		return x
	case int, float64:
		return ordered.KeyString(x)
	}
	r.fail(fmt.Errorf("rest_cherrypy: %s: want a string, got %v", key, v))
	return def
}

func (r *reader) int(key string, def int) int {
	v, ok := r.m.Get(key)
	if !ok || v == nil {
		return def
	}
	switch x := v.(type) {
	case int:
		return x
	case string:
		if n, err := strconv.Atoi(strings.TrimSpace(x)); err == nil {
			return n
		}
	}
	r.fail(fmt.Errorf("%s: want a whole number, got %v", key, v))
	return def
}

func (r *reader) bool(key string, def bool) bool {
	v, ok := r.m.Get(key)
	if !ok || v == nil {
		return def
	}
	switch x := v.(type) {
	case bool:
		return x
	case int:
		return x != 0
	case string:
		switch strings.ToLower(x) {
		case "true", "yes", "on", "1":
			return true
		case "false", "no", "off", "0", "":
			return false
		}
	}
	r.fail(fmt.Errorf("%s: want True or False, got %v", key, v))
	return def
}

// strings reads a list of strings; a single string is a one-item list.
func (r *reader) strings(key string) []string {
	v, ok := r.m.Get(key)
	if !ok || v == nil {
		return nil
	}
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			out = append(out, ordered.KeyString(e))
		}
		return out
	}
	r.fail(fmt.Errorf("%s: want a list, got %v", key, v))
	return nil
}

// acl reads api_acl: {users: {name: [ip, ...]}}.
func (r *reader) acl() map[string][]string {
	acl, ok := r.m.Value("api_acl").(*ordered.Map)
	if !ok {
		return nil
	}
	users, ok := acl.Value("users").(*ordered.Map)
	if !ok || users.Len() == 0 {
		return nil
	}
	out := map[string][]string{}
	ur := reader{m: users}
	users.Range(func(k, _ any) bool {
		name := ordered.KeyString(k)
		out[name] = ur.strings(name)
		return true
	})
	r.fail(ur.err)
	return out
}
