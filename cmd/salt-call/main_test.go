package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
)

// TestOptionTable pins salt-call's flags.
func TestOptionTable(t *testing.T) {
	var o options
	fs := newFlagSet(&o, io.Discard)
	var got []string
	fs.VisitAll(func(f *pflag.Flag) {
		s := "--" + f.Name
		if f.Shorthand != "" {
			s += ",-" + f.Shorthand
		}
		got = append(got, s)
	})
	sort.Strings(got)
	want := []string{"--config-dir,-c", "--file-root", "--force-color", "--grains,-g", "--id", "--local", "--log-level,-l",
		"--no-color", "--out", "--out-indent", "--output", "--pillar-root", "--retcode-passthrough", "--state-output", "--state-verbose", "--version,-V"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("flags (-want +got):\n%s", diff)
	}
}

func writeFile(t *testing.T, p, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestRun(t *testing.T) {
	dir := t.TempDir()
	salt, pillar, conf := filepath.Join(dir, "salt"), filepath.Join(dir, "pillar"), filepath.Join(dir, "conf")
	writeFile(t, filepath.Join(salt, "top.sls"), "base:\n  '*':\n    - s\n")
	writeFile(t, filepath.Join(salt, "s.sls"), "ok:\n  test.succeed_with_changes: []\nbad:\n  test.fail_without_changes: []\n")
	writeFile(t, filepath.Join(pillar, "top.sls"), "base:\n  '*':\n    - p\n")
	writeFile(t, filepath.Join(pillar, "p.sls"), "k: v\n")
	writeFile(t, filepath.Join(conf, "minion"), "id: test-minion\nfile_client: local\ncachedir: "+dir+"/cache\n"+
		"file_roots:\n  base:\n    - "+salt+"\npillar_roots:\n  base:\n    - "+pillar+"\n")
	tests := []struct {
		args     []string
		code     int
		contains string
	}{
		{[]string{"--local", "-c", conf, "--out=json", "pillar.get", "k"}, 0, `"local": "v"`},
		{[]string{"pillar.get", "--local", "k", "-c", conf, "--out", "json"}, 0, `"local": "v"`},
		{[]string{"--local", "-c", conf, "--out=json", "--retcode-passthrough", "state.apply"}, 2, `"result": false`},
		{[]string{"--local", "-c", conf, "--out=json", "state.apply"}, 1, `"test_|-ok_|-ok_|-succeed_with_changes"`},
		{[]string{"--local", "-c", conf, "state.apply", "s", "test=True"}, 1, "Summary for local"},
		{[]string{"--local", "-c", conf, "no.such_function"}, 255, ""},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(context.Background(), tc.args, nil, &out, &errb)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr %s", code, tc.code, errb.String())
			}
			if !strings.Contains(out.String(), tc.contains) {
				t.Errorf("stdout lacks %q:\n%s", tc.contains, out.String())
			}
		})
	}
}
