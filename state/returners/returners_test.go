package returners

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/testsupport/clustertest"
	"github.com/brinesalt/brine/state/modules"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func env(opts ...any) *modules.Env {
	return (&modules.Env{Opts: ordered.FromPairs(opts...), Pillar: ordered.FromPairs("syslog.tag", "frompillar")}).WithGrains(ordered.New())
}

func TestOptions(t *testing.T) {
	e := env("rawfile_json.filename", "/flat", "alt.rawfile_json.filename", "/alt",
		"syslog", ordered.FromPairs("level", "LOG_ERR"), "syslog.level", "LOG_DEBUG")
	attrs := []string{"filename", "level", "tag", "missing"}
	defs := map[string]any{"missing": "def", "filename": "/default"}
	tests := []struct {
		name, returner string
		ret            *ordered.Map
		want           map[string]any
	}{
		{"flat key", "rawfile_json", ordered.New(), map[string]any{"filename": "/flat", "missing": "def"}},
		{"ret_config", "rawfile_json", ordered.FromPairs("ret_config", "alt"), map[string]any{"filename": "/alt", "missing": "def"}},
		{"ret_config without the key falls back", "rawfile_json", ordered.FromPairs("ret_config", "nope"), map[string]any{"filename": "/flat", "missing": "def"}},
		{"ret_kwargs win", "rawfile_json", ordered.FromPairs("ret_config", "alt", "ret_kwargs", ordered.FromPairs("filename", "/kw")), map[string]any{"filename": "/kw", "missing": "def"}},
		{"nested dict before flat key; pillar", "syslog", ordered.New(), map[string]any{"level": "LOG_ERR", "tag": "frompillar", "filename": "/default", "missing": "def"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Options(e, tc.returner, tc.ret, attrs, defs)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Error(d)
			}
		})
	}
}

func sampleRet(id string) *ordered.Map {
	return ordered.FromPairs("success", true, "return", "pong ü", "retcode", 0, "jid", "20261201000000000000",
		"fun", "test.echo", "fun_args", []any{"x"}, "id", id)
}

func TestRawfileJSONConcurrentLines(t *testing.T) {
	file := filepath.Join(t.TempDir(), "events")
	e := env("rawfile_json.filename", file)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if errs := Default.Send(context.Background(), e, "rawfile_json", sampleRet(strings.Repeat("m", i+1))); errs != nil {
				t.Error(errs)
			}
		}()
	}
	wg.Wait()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 20 {
		t.Fatalf("got %d lines, want 20:\n%s", len(lines), b)
	}
	for _, l := range lines {
		var v map[string]any
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		if v["return"] != "pong ü" || v["fun"] != "test.echo" {
			t.Errorf("line %q lost fields", l)
		}
	}
	if !strings.HasPrefix(lines[0], `{"success": true, "return": "pong ü", "retcode": 0, `) {
		t.Errorf("line is not Python's json.dumps in return order: %s", lines[0])
	}
}

func TestRawfileJSONUnwritable(t *testing.T) {
	e := env("rawfile_json.filename", filepath.Join(t.TempDir(), "no", "such", "dir", "events"))
	errs := Default.Send(context.Background(), e, "rawfile_json,nosuch", sampleRet("m1"))
	if len(errs) != 2 || !errors.Is(errs[1], ErrUnknown) || !strings.Contains(errs[0].Error(), "rawfile_json") {
		t.Fatalf("errors = %v", errs)
	}
}

func TestSyslog(t *testing.T) {
	sock, ch := clustertest.SyslogListener(t)
	e := env("syslog", ordered.FromPairs("socket", sock, "facility", "LOG_LOCAL3", "level", "LOG_WARNING", "tag", "brine-ret",
		"options", []any{"LOG_PID"}))
	if errs := Default.Send(context.Background(), e, "syslog", sampleRet("m1")); errs != nil {
		t.Fatal(errs)
	}
	select {
	case msg := <-ch:
		// <PRI> = facility*8 + severity = 19*8 + 4.
		if !strings.HasPrefix(msg, "<156>") || !strings.Contains(msg, " brine-ret[") || !strings.Contains(msg, `"id": "m1"`) {
			t.Errorf("syslog message = %q", msg)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no syslog message arrived")
	}
}

func TestSyslogBadOptions(t *testing.T) {
	sock, ch := clustertest.SyslogListener(t)
	for _, o := range []*ordered.Map{
		ordered.FromPairs("socket", sock, "level", "LOG_LOUD"),
		ordered.FromPairs("socket", sock, "facility", "LOG_NOPE"),
		ordered.FromPairs("socket", sock, "options", []any{"LOG_PID", "LOG_X"}),
		ordered.FromPairs("socket", sock, "tag", strings.Repeat("t", 33)),
	} {
		errs := Default.Send(context.Background(), env("syslog", o), "syslog", sampleRet("m1"))
		if len(errs) != 1 || !errors.Is(errs[0], ErrBadSyslogOption) {
			t.Errorf("options %v: errors = %v", o, errs)
		}
	}
	select {
	case msg := <-ch:
		t.Errorf("a message was sent despite bad options: %q", msg)
	default:
	}
}

func TestRegistryDuplicatePanics(t *testing.T) {
	r := NewRegistry()
	r.Register("x", RawfileJSON)
	defer func() {
		if recover() == nil {
			t.Error("duplicate registration did not panic")
		}
	}()
	r.Register("x", RawfileJSON)
}
