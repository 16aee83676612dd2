package cmdstate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/keyword"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/states"
)

func call(t *testing.T, fun string, test bool, low *ordered.Map) *states.Result {
	t.Helper()
	r := states.NewRegistry()
	Register(r)
	env := &modules.Env{Test: test, Registry: modules.NewRegistry()}
	f, reason := r.Lookup(env, fun)
	if f == nil {
		t.Fatal(reason)
	}
	args, kw, err := f.Bind(low, keyword.Internal)
	if err != nil {
		t.Fatal(err)
	}
	res, err := f.Run(context.Background(), &states.Call{Env: env, Args: args, Kwargs: kw, Low: low, Saltenv: "base"})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestRun(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		fun     string
		test    bool
		low     *ordered.Map
		result  states.Tri
		comment string
		changes string
	}{
		{"success strips the trailing newline", "cmd.run", false, ordered.FromPairs("name", "printf 'a\\nb\\n'"),
			states.True, `Command "printf 'a\nb\n'" run`, `"retcode":0,"stdout":"a\nb","stderr":""`},
		{"failure keeps the output", "cmd.run", false, ordered.FromPairs("name", "echo out; echo err >&2; exit 3"),
			states.False, `Command "echo out; echo err >&2; exit 3" run`, `"retcode":3,"stdout":"out","stderr":"err"`},
		{"success_retcodes reports 0", "cmd.run", false, ordered.FromPairs("name", "exit 3", "success_retcodes", []any{3}),
			states.True, `Command "exit 3" run`, `"retcode":0`},
		{"cwd and env", "cmd.run", false, ordered.FromPairs("name", "echo $PWD $FOO", "cwd", dir,
			"env", []any{ordered.FromPairs("FOO", "bar")}), states.True, "", `"stdout":"` + dir + ` bar"`},
		{"missing cwd", "cmd.run", false, ordered.FromPairs("name", "true", "cwd", filepath.Join(dir, "nope")),
			states.False, `Desired working directory "` + filepath.Join(dir, "nope") + `" is not available`, `{}`},
		{"test mode", "cmd.run", true, ordered.FromPairs("name", "rm -rf /nothing"),
			states.None, `Command "rm -rf /nothing" would have been executed`, `{"cmd":"rm -rf /nothing"}`},
		{"stateful", "cmd.run", false, ordered.FromPairs("name", "echo changed=yes comment=done", "stateful", true),
			states.True, "done", `"changed":"yes"`},
		{"wait does nothing", "cmd.wait", false, ordered.FromPairs("name", "false"), states.True, "", `{}`},
		{"mod_watch runs the command", "cmd.mod_watch", false, ordered.FromPairs("name", "echo fired", "sfun", "wait"),
			states.True, `Command "echo fired" run`, `"stdout":"fired"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, tc.fun, tc.test, tc.low)
			if res.Result != tc.result {
				t.Errorf("result = %v, want %v (comment %q)", res.Result.Value(), tc.result.Value(), res.Comment)
			}
			if tc.comment != "" && res.Comment != tc.comment {
				t.Errorf("comment = %q, want %q", res.Comment, tc.comment)
			}
			b, _ := res.Changes.MarshalJSON()
			if !strings.Contains(string(b), tc.changes) {
				t.Errorf("changes = %s, want it to contain %s", b, tc.changes)
			}
		})
	}
}

func TestScriptFromFileServer(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s.sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\necho script $1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	res := call(t, "cmd.script", false, ordered.FromPairs("name", p+" arg1"))
	if res.Result != states.True || res.Changes.Value("stdout") != "script arg1" {
		b, _ := res.Changes.MarshalJSON()
		t.Errorf("script = %v %q %s", res.Result.Value(), res.Comment, b)
	}
}
