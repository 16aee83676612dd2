package servicestate

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/testsupport/pkgtest"
	"github.com/brinesalt/brine/state/keyword"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/modules/pkg/syscmd"
	"github.com/brinesalt/brine/state/modules/service"
	"github.com/brinesalt/brine/state/states"
)

func newEnv(m *service.Module, grains *ordered.Map, test bool) *modules.Env {
	r := modules.NewRegistry()
	service.Register(r, m)
	return (&modules.Env{Registry: r, Opts: ordered.New(), Test: test, Context: map[string]any{}}).WithGrains(grains)
}

func apply(t *testing.T, e *modules.Env, fun string, kv ...any) *states.Result {
	t.Helper()
	r := states.NewRegistry()
	Register(r)
	f, reason := r.Lookup(e, fun)
	if f == nil {
		t.Fatal(reason)
	}
	low := ordered.FromPairs(kv...)
	args, kwargs, err := f.Bind(low, keyword.Internal)
	if err != nil {
		t.Fatal(err)
	}
	res, err := f.Run(context.Background(), &states.Call{Env: e, Args: args, Kwargs: kwargs, Low: low})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

var systemd = ordered.FromPairs("os", "Debian", "os_family", "Debian", "init", "systemd", "systemd", ordered.FromPairs("version", "252"))

func which(n string) string {
	if n == "systemctl" {
		return "/bin/systemctl"
	}
	return ""
}

// TestSystemdStates drives the service states against systemd facts.
func TestSystemdStates(t *testing.T) {
	tests := []struct {
		name     string
		fun      string
		test     bool
		facts    func(*pkgtest.Fake)
		low      []any
		result   states.Tri
		comment  string
		changes  string
		commands []string
	}{{
		name: "already running and enabled", fun: "service.running", low: []any{"enable", true},
		result: states.True, comment: "The service nginx is already running", changes: "{}",
	}, {
		name: "start and enable", fun: "service.running", low: []any{"enable", true},
		facts: func(f *pkgtest.Fake) {
			f.Once("* is-active nginx.service", 3, "inactive").Once("* is-enabled nginx.service", 1, "disabled").
				Once("* is-enabled nginx.service", 1, "disabled").Once("* is-enabled nginx.service", 1, "disabled")
		},
		result: states.True, comment: "Service nginx has been enabled, and is running", changes: `{"nginx":true}`,
		commands: []string{"/bin/systemctl start nginx.service", "/bin/systemctl enable nginx.service"},
	}, {
		name: "start fails", fun: "service.running",
		facts: func(f *pkgtest.Fake) {
			f.On("* is-active nginx.service", 3, "inactive").Fail("* start nginx.service", 1, "Job for nginx.service failed.")
		},
		result: states.False, comment: "Job for nginx.service failed.", changes: "{}",
		commands: []string{"/bin/systemctl start nginx.service"},
	}, {
		name: "test mode start", fun: "service.running", test: true,
		facts:  func(f *pkgtest.Fake) { f.On("* is-active nginx.service", 3, "inactive") },
		result: states.None, comment: "Service nginx is set to start", changes: "{}",
	}, {
		name: "not available", fun: "service.running",
		facts:  func(f *pkgtest.Fake) { f.On("* status nginx.service -n 0", 4, "") },
		result: states.False, comment: "The named service nginx is not available", changes: "{}",
	}, {
		name: "dead", fun: "service.dead", low: []any{"enable", false},
		facts: func(f *pkgtest.Fake) {
			f.Once("* is-active nginx.service", 0, "active").On("* is-active nginx.service", 3, "inactive").
				Once("* is-enabled nginx.service", 0, "enabled").Once("* is-enabled nginx.service", 0, "enabled").
				Once("* is-enabled nginx.service", 0, "enabled").On("* is-enabled nginx.service", 1, "disabled")
		},
		// _disable's changes replace the stop's, as ret.update does in Salt.
		result: states.True, comment: "Service nginx has been disabled, and is dead", changes: `{"nginx":true}`,
		commands: []string{"/bin/systemctl stop nginx.service", "/bin/systemctl disable nginx.service"},
	}, {
		name: "enabled already", fun: "service.enabled",
		result: states.True, comment: "Service nginx is already enabled, and is in the desired state", changes: "{}",
	}, {
		name: "watch restarts", fun: "service.mod_watch", low: []any{"sfun", "running"},
		result: states.True, comment: "Service restarted", changes: `{"nginx":true}`,
		commands: []string{"/bin/systemctl restart nginx.service"},
	}, {
		name: "watch reloads", fun: "service.mod_watch", low: []any{"sfun", "running", "reload", true},
		result: states.True, comment: "Service reloaded", changes: `{"nginx":true}`,
		commands: []string{"/bin/systemctl reload nginx.service"},
	}, {
		name: "watch starts a stopped service", fun: "service.mod_watch", low: []any{"sfun", "running", "reload", true},
		facts:  func(f *pkgtest.Fake) { f.On("* is-active nginx.service", 3, "inactive") },
		result: states.True, comment: "Service started", changes: `{"nginx":true}`,
		commands: []string{"/bin/systemctl stop nginx.service", "/bin/systemctl start nginx.service"},
	}, {
		name: "watch in test mode", fun: "service.mod_watch", test: true, low: []any{"sfun", "running"},
		result: states.None, comment: "Service is set to be restarted", changes: "{}",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &pkgtest.Fake{}
			if tt.facts != nil {
				tt.facts(f)
			}
			e := newEnv(&service.Module{Run: f.Run, Which: which, Root: t.TempDir()}, systemd, tt.test)
			e.Opts.Set("systemd.scope", false)
			got := apply(t, e, tt.fun, append([]any{"name", "nginx"}, tt.low...)...)
			if got.Result != tt.result || got.Comment != tt.comment || js(got.Changes) != tt.changes {
				t.Errorf("got %v %q %s; want %v %q %s", got.Result, got.Comment, js(got.Changes), tt.result, tt.comment, tt.changes)
			}
			if diff := cmp.Diff(tt.commands, f.Changing("/bin/systemctl is-", "/bin/systemctl status")); diff != "" {
				t.Errorf("commands (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRealSysVStates runs the states against a real init script.
func TestRealSysVStates(t *testing.T) {
	s := pkgtest.InstallInitScript(t)
	e := newEnv(&service.Module{Run: syscmd.Exec, Which: syscmd.Which}, ordered.FromPairs("os", "Debian", "os_family", "Debian", "init", "unknown"), false)
	steps := []struct {
		fun     string
		low     []any
		comment string
		changes string
	}{
		{"service.running", []any{"enable", true}, "Service " + s.Name + " has been enabled, and is running", `{"` + s.Name + `":true}`},
		{"service.running", []any{"enable", true}, "The service " + s.Name + " is already running", `{}`},
		{"service.mod_watch", []any{"sfun", "running", "reload", true}, "Service reloaded", `{"` + s.Name + `":true}`},
		{"service.mod_watch", []any{"sfun", "running"}, "Service restarted", `{"` + s.Name + `":true}`},
		{"service.dead", []any{"enable", false}, "Service " + s.Name + " has been disabled, and is dead", `{"` + s.Name + `":true}`},
		{"service.disabled", nil, "Service " + s.Name + " is already disabled, and is in the desired state", `{}`},
	}
	for _, st := range steps {
		got := apply(t, e, st.fun, append([]any{"name", s.Name}, st.low...)...)
		if got.Result != states.True || got.Comment != st.comment || js(got.Changes) != st.changes {
			t.Errorf("%s: got %v %q %s; want True %q %s", st.fun, got.Result, got.Comment, js(got.Changes), st.comment, st.changes)
		}
	}
	if diff := cmp.Diff([]string{"start", "reload", "restart", "stop"}, s.Actions()); diff != "" {
		t.Errorf("script actions (-want +got):\n%s", diff)
	}
}

func TestRunningInitDelay(t *testing.T) {
	f := (&pkgtest.Fake{}).Once("* is-active nginx.service", 3, "inactive")
	e := newEnv(&service.Module{Run: f.Run, Which: which, Root: t.TempDir()}, systemd, false)
	e.Opts.Set("systemd.scope", false)
	got := apply(t, e, "service.running", "name", "nginx", "init_delay", 0.01)
	if got.Result != states.True || got.Comment != "Started service nginx\nDelayed return for 0.01 seconds" || js(got.Changes) != `{"nginx":true}` {
		t.Errorf("got %v %q %s", got.Result, got.Comment, js(got.Changes))
	}
	got = apply(t, e, "service.running", "name", "nginx", "enabled", true)
	if got.Result != states.False || got.Comment != `Service nginx uses non-existent option "enabled".  Perhaps "enable" option was intended?` {
		t.Errorf("got %v %q", got.Result, got.Comment)
	}
}
