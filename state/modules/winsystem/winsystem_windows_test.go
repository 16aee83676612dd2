package winsystem

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"golang.org/x/sys/windows"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
)

func newEnv() *modules.Env {
	return &modules.Env{Pillar: ordered.New(), Opts: ordered.New(), Registry: modules.Default,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Context: map[string]any{}}
}

// underWine reports whether this process runs under Wine (its ntdll
// exports wine_get_version).
func underWine() bool {
	return windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version").Find() == nil
}

// TestWindowsShutdownCalls: system.reboot, system.shutdown and
// system.shutdown_abort return what Salt's win_system returns (True when
// InitiateSystemShutdownEx / AbortSystemShutdown succeed), and bad
// arguments are errors. The calls themselves run only under Wine, whose
// InitiateSystemShutdownExW and AbortSystemShutdownW are stubs that
// return TRUE and shut nothing down: on a real Windows this test would
// reboot the machine, so there it checks the argument errors only. What
// a real shutdown does is not tested (docs/WINDOWS.md).
func TestWindowsShutdownCalls(t *testing.T) {
	bad := []struct {
		fun  string
		kw   *ordered.Map
		want string
	}{
		{"system.reboot", ordered.FromPairs("timeout", "soon"), "timeout must be an integer"},
		{"system.shutdown", ordered.FromPairs("only_on_pending_reboot", true), "only_on_pending_reboot is not supported"},
		{"system.reboot", ordered.FromPairs("only_on_pending_reboot", true), "only_on_pending_reboot is not supported"},
	}
	for _, c := range bad {
		_, err := newEnv().Run(context.Background(), c.fun, nil, c.kw)
		var ie *modules.InvocationError
		var ee *modules.ExecutionError
		if err == nil || !(errors.As(err, &ie) || errors.As(err, &ee)) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %v: %v, want %q", c.fun, c.kw.Keys(), err, c.want)
		}
	}
	if !underWine() {
		t.Log("not under Wine: the shutdown calls would shut this machine down and are not made")
		return
	}
	calls := []struct {
		fun string
		kw  *ordered.Map
	}{
		{"system.reboot", ordered.FromPairs("timeout", 600, "in_seconds", true)},
		{"system.shutdown_abort", ordered.New()},
		{"system.shutdown", ordered.FromPairs("message", "brine test", "timeout", 10, "force_close", false)},
		{"system.shutdown_abort", ordered.New()},
	}
	for _, c := range calls {
		got, err := newEnv().Run(context.Background(), c.fun, nil, c.kw)
		if err != nil || got != true {
			t.Errorf("%s %v = %v, %v; want True", c.fun, c.kw.Keys(), got, err)
		}
	}
}
