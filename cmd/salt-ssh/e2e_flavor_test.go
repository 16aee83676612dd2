package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/brinesalt/brine/internal/testsupport/testhosts"
)

var (
	flavorsOnce sync.Once
	flavorsDir  string
	flavorsErr  error
)

// buildFlavors returns a directory holding both thin flavors, the full
// thin of buildThin and the core flavor, as make thin lays them out.
func buildFlavors(t *testing.T) string {
	t.Helper()
	full := filepath.Join(buildThin(t), "salt-thin-linux-"+runtime.GOARCH)
	flavorsOnce.Do(func() {
		dir := filepath.Join(thinDir, "flavors")
		if flavorsErr = os.Mkdir(dir, 0o755); flavorsErr != nil {
			return
		}
		if flavorsErr = os.Link(full, filepath.Join(dir, filepath.Base(full))); flavorsErr != nil {
			return
		}
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o",
			filepath.Join(dir, "salt-thin-core-linux-"+runtime.GOARCH), "github.com/brinesalt/brine/cmd/salt-thin-core")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if b, err := cmd.CombinedOutput(); err != nil {
			flavorsErr = fmt.Errorf("%w: %s", err, b)
		}
		flavorsDir = dir
	})
	if flavorsErr != nil {
		t.Fatalf("build thin flavors: %v", flavorsErr)
	}
	return flavorsDir
}

// sentRE matches salt-ssh -v's report of a binary sent to a host.
var sentRE = regexp.MustCompile(`(?m)^(\S+): connect .* \(thin sent: (salt-thin-\S+), (\d+) bytes\)`)

// sent maps each host to the binary -v says was sent to it.
func sent(stderr string) map[string]string {
	out := map[string]string{}
	for _, m := range sentRE.FindAllStringSubmatch(stderr, -1) {
		out[m[1]] = m[2]
	}
	return out
}

func isCore(name string) bool { return strings.HasPrefix(name, "salt-thin-core-") }

// TestE2ECoreFlavor: on real sshd hosts, a cold test.ping sends only the
// core flavor; cmd.run runs on it; sys.list_functions and state.apply
// send the full thin, which replaces the core; core functions answer in
// the same shape on either flavor.
func TestE2ECoreFlavor(t *testing.T) {
	c := testhosts.New(t, 2)
	e := newEnv(t, c, true)
	t.Setenv("BRINE_THIN_DIR", buildFlavors(t))
	srv := t.TempDir()
	writeTree(t, srv, map[string]string{
		"salt/top.sls":   "base:\n  '*':\n    - ok\n",
		"salt/ok.sls":    "fine:\n  test.succeed_without_changes: []\n",
		"pillar/top.sls": "base: {}\n",
	})
	e.writeMaster(fmt.Sprintf("file_roots:\n  base:\n    - %s/salt\npillar_roots:\n  base:\n    - %s/pillar\n", srv, srv))

	got, code, stderr := e.verbose("*", "test.ping")
	s := sent(stderr)
	if code != 0 || got["host1"] != true || got["host2"] != true || !isCore(s["host1"]) || !isCore(s["host2"]) {
		t.Fatalf("cold test.ping: code %d, %v, sent %v\n%s", code, got, s, stderr)
	}
	for _, id := range []string{"host1", "host2"} {
		if files := thinFiles(t, e, id); !slices.Equal(files, []string{s[id]}) {
			t.Errorf("%s thin_dir holds %v after a cold test.ping, want only %s", id, files, s[id])
		}
	}
	got, code, stderr = e.verbose("*", "cmd.run", "echo on core")
	if code != 0 || got["host1"] != "on core" || len(sent(stderr)) != 0 {
		t.Errorf("cmd.run on the core: code %d, %v\n%s", code, got, stderr)
	}

	got, code, stderr = e.verbose("host1", "sys.list_functions")
	full := sent(stderr)["host1"]
	funcs, _ := got["host1"].([]any)
	if code != 0 || full == "" || isCore(full) || !slices.Contains(funcs, any("state.apply")) {
		t.Fatalf("sys.list_functions: code %d, sent %q, %d functions\n%s", code, full, len(funcs), stderr)
	}
	if files := thinFiles(t, e, "host1"); !slices.Equal(files, []string{full}) {
		t.Errorf("host1 thin_dir holds %v after sys.list_functions, want only %s", files, full)
	}

	// host1 runs the full thin, host2 the core: same shapes.
	for _, args := range [][]string{
		{"test.arg", "a", "1", "k=v"},
		{"cmd.run_all", "echo out; echo err >&2; exit 2"},
		{"grains.item", "id", "os_family"},
		{"test.version"},
	} {
		got, _, stderr := e.verbose(append([]string{"*"}, args...)...)
		if len(sent(stderr)) != 0 {
			t.Errorf("%v sent a thin again: %s", args, stderr)
		}
		if a, b := shape(got["host1"]), shape(got["host2"]); !reflect.DeepEqual(a, b) {
			t.Errorf("%v: full thin answers %v (%v), core %v (%v)", args, got["host1"], a, got["host2"], b)
		}
	}

	got, code, stderr = e.verbose("host2", "state.apply")
	if s := sent(stderr)["host2"]; code != 0 || s != full {
		t.Errorf("state.apply on a core host: code %d, sent %q (want %s), %v\n%s", code, s, full, got, stderr)
	}
	if files := thinFiles(t, e, "host2"); !slices.Equal(files, []string{full}) {
		t.Errorf("host2 thin_dir holds %v after state.apply, want only %s", files, full)
	}
}

// verbose is saltSSH with -v, whose job banner on stdout precedes the
// JSON and whose timings on stderr say what was sent to each host.
func (e *env) verbose(args ...string) (map[string]any, int, string) {
	e.t.Helper()
	var stdout, stderr bytes.Buffer
	argv := append([]string{"-c", e.dir, "--out", "json", "--static", "-v"}, args...)
	code := run(context.Background(), argv, strings.NewReader(""), &stdout, &stderr)
	got := map[string]any{}
	out := stdout.String()
	if i := strings.Index(out, "\n{"); i >= 0 {
		if err := json.Unmarshal([]byte(out[i:]), &got); err != nil {
			e.t.Fatalf("salt-ssh -v %v: output is not JSON: %v\n%s\nstderr: %s", args, err, out, stderr.String())
		}
	}
	return got, code, stderr.String()
}

// shape is a JSON value with every scalar replaced by its type (and the
// pid of cmd.run_all dropped): what must agree between flavors.
func shape(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, x := range v {
			out[k] = shape(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = shape(x)
		}
		return out
	}
	return fmt.Sprintf("%T", v)
}
