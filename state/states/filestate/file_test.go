package filestate

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/testsupport/testhosts"
	"github.com/brinesalt/brine/state/fileclient"
	"github.com/brinesalt/brine/state/keyword"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/modules/file"
	"github.com/brinesalt/brine/state/states"
)

// harness runs file states against a temporary file_roots (salt://) and
// a temporary target directory.
type harness struct {
	t     *testing.T
	roots string
	dir   string
	env   *modules.Env
	reg   *states.Registry
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	h := &harness{t: t, roots: t.TempDir(), dir: t.TempDir(), reg: states.NewRegistry()}
	Register(h.reg)
	mreg := modules.NewRegistry()
	file.Register(mreg)
	h.env = (&modules.Env{
		Pillar:   ordered.FromPairs("motd", "hello", "nested", ordered.FromPairs("key", "deep")),
		Opts:     ordered.FromPairs("cachedir", t.TempDir()),
		Registry: mreg,
		Files:    fileclient.New(map[string][]string{"base": {h.roots}}, nil),
		Context:  map[string]any{},
	}).WithGrains(ordered.FromPairs("os_family", "Debian", "id", "minion1"))
	return h
}

// p returns a path under the target directory.
func (h *harness) p(rel string) string { return filepath.Join(h.dir, rel) }

// salt writes a file under file_roots.
func (h *harness) salt(rel, data string) {
	h.t.Helper()
	writeFile(h.t, filepath.Join(h.roots, rel), data, 0o644)
}

func writeFile(t *testing.T, p, data string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func modeOf(t *testing.T, p string) string {
	t.Helper()
	st, err := file.Stats(p, "", false)
	if err != nil {
		t.Fatal(err)
	}
	return st.Mode
}

// run binds low (key, value pairs) to fun as the state compiler does and
// runs it.
func (h *harness) run(fun string, test bool, kv ...any) *states.Result {
	h.t.Helper()
	low := ordered.FromPairs(kv...)
	env := *h.env
	env.Test = test
	f, reason := h.reg.Lookup(&env, fun)
	if f == nil {
		h.t.Fatal(reason)
	}
	args, kw, err := f.Bind(low, keyword.Internal)
	if err != nil {
		h.t.Fatal(err)
	}
	if !low.Has("__id__") {
		low.Set("__id__", low.Value("name"))
	}
	res, err := f.Run(context.Background(), &states.Call{Env: &env, Args: args, Kwargs: kw, Low: low, Saltenv: "base"})
	if err != nil {
		h.t.Fatalf("%s: %v", fun, err)
	}
	return res
}

// step is one state run and what it must return. changes is the exact
// JSON of the changes; "" skips the check.
type step struct {
	fun     string
	test    bool
	kv      []any
	result  states.Tri
	comment string
	changes string
}

func (h *harness) check(steps ...step) {
	h.t.Helper()
	for i, s := range steps {
		res := h.run(s.fun, s.test, s.kv...)
		if res.Result != s.result {
			h.t.Errorf("step %d %s: result = %v, want %v (comment %q)", i, s.fun, res.Result.Value(), s.result.Value(), res.Comment)
		}
		if s.comment != "" && res.Comment != s.comment {
			h.t.Errorf("step %d %s: comment:\n%s", i, s.fun, cmp.Diff(s.comment, res.Comment))
		}
		if s.changes != "" {
			b, err := json.Marshal(res.Changes)
			if err != nil {
				h.t.Fatal(err)
			}
			if string(b) != s.changes {
				h.t.Errorf("step %d %s: changes:\n%s", i, s.fun, cmp.Diff(s.changes, string(b)))
			}
		}
	}
}

// umaskMode is the mode a new file gets from manage_file:
// 0666 & ~umask.
func umaskMode() string {
	m, _ := file.NormalizeMode(fmt.Sprintf("%o", 0o666&^file.Umask()))
	return m
}

func TestManagedContents(t *testing.T) {
	h := newHarness(t)
	f := h.p("f.conf")
	h.check(
		step{"file.managed", true, []any{"name", f, "contents", "stable"}, states.None,
			"The file " + f + " is set to be changed\nNote: No changes made, actual changes may\nbe different due to other states.",
			`{"newfile":"` + f + `"}`},
		step{"file.managed", false, []any{"name", f, "contents", "stable"}, states.True,
			"File " + f + " updated", `{"diff":"New file"}`},
		step{"file.managed", false, []any{"name", f, "contents", "stable"}, states.True,
			"File " + f + " is in the correct state", `{}`},
		step{"file.managed", true, []any{"name", f, "contents", "stable"}, states.True,
			"The file " + f + " is in the correct state", `{}`},
		step{"file.managed", true, []any{"name", f, "contents", "changed"}, states.None, "",
			`{"diff":"--- \n+++ \n@@ -1 +1 @@\n-stable\n+changed\n"}`},
		step{"file.managed", false, []any{"name", f, "contents", "changed"}, states.True,
			"File " + f + " updated", `{"diff":"--- \n+++ \n@@ -1 +1 @@\n-stable\n+changed\n"}`},
		step{"file.managed", false, []any{"name", f, "contents", []any{"a", 1, "b"}, "show_changes", false}, states.True,
			"", `{"diff":"\u003cshow_changes=False\u003e"}`},
	)
	if got := readFile(t, f); got != "a\n1\nb\n" {
		t.Errorf("list contents = %q", got)
	}
	h.check(step{"file.managed", false, []any{"name", f, "contents", "x", "contents_newline", false}, states.True, "", ""})
	if got := readFile(t, f); got != "x" {
		t.Errorf("contents_newline False = %q", got)
	}
	if got := modeOf(t, f); got != umaskMode() {
		t.Errorf("mode = %s, want %s", got, umaskMode())
	}
}

func TestManagedPillarAndErrors(t *testing.T) {
	h := newHarness(t)
	f := h.p("p.txt")
	h.check(
		step{"file.managed", false, []any{"name", f, "contents_pillar", "nested:key"}, states.True, "", `{"diff":"New file"}`},
		step{"file.managed", false, []any{"name", f, "contents_pillar", "nope"}, states.False, "Pillar nope does not exist", `{}`},
		step{"file.managed", false, []any{"name", f, "contents_grains", "os_family"}, states.True, "", ""},
		step{"file.managed", false, []any{"name", f, "contents", "a", "source", "salt://x"}, states.False,
			"'source' cannot be used in combination with 'contents', 'contents_pillar', or 'contents_grains'", ""},
		step{"file.managed", false, []any{"name", "rel/path", "contents", "a"}, states.False, "Specified file rel/path is not an absolute path", ""},
		step{"file.managed", false, []any{"name", h.dir, "contents", "a"}, states.False, "Specified target " + h.dir + " is a directory", ""},
		step{"file.managed", false, []any{"name", h.p("missing/x"), "contents", "a"}, states.False, "Parent directory not present", `{}`},
		step{"file.managed", false, []any{"name", h.p("nocreate"), "contents", "a", "create", false}, states.True,
			"File " + h.p("nocreate") + " is not present and is not set for creation", `{}`},
		step{"file.managed", false, []any{"name", h.p("empty")}, states.True, "Empty file", `{"new":"file ` + h.p("empty") + ` created"}`},
	)
	if got := readFile(t, f); got != "Debian\n" {
		t.Errorf("contents_grains = %q", got)
	}
}

func TestManagedSource(t *testing.T) {
	h := newHarness(t)
	h.salt("files/motd", "hello\n")
	h.salt("tpl/app.ini", "[app]\nname = {{ name }}\nport = {{ port }}\nfamily = {{ grains['os_family'] }}\n{%- if debug %}\ndebug = on\n{%- endif %}\nid = {{ salt['file.basename']('/x/' ~ grains['id']) }}\n")
	f, tpl := h.p("motd"), h.p("sub/app.ini")
	newMode := `,"mode":"` + umaskMode() + `"`
	h.check(
		step{"file.managed", false, []any{"name", f, "source", "salt://files/motd"}, states.True,
			"File " + f + " updated", `{"diff":"New file"` + newMode + `}`},
		step{"file.managed", false, []any{"name", f, "source", "salt://files/motd"}, states.True,
			"File " + f + " is in the correct state", `{}`},
		step{"file.managed", false, []any{"name", f, "source", "salt://files/nope"}, states.False,
			"Source file salt://files/nope not found in saltenv 'base'", `{}`},
		step{"file.managed", false, []any{"name", f, "source", []any{"salt://nope", "salt://files/motd"}}, states.True,
			"File " + f + " is in the correct state", `{}`},
		step{"file.managed", false, []any{"name", f, "source", []any{"salt://nope", "salt://nope2"}}, states.False,
			"Unable to manage file: none of the specified sources were found", `{}`},
		step{"file.managed", false, []any{"name", tpl, "source", "salt://tpl/app.ini", "template", "jinja", "makedirs", true,
			"defaults", ordered.FromPairs("name", "dflt", "port", 80, "debug", false),
			"context", ordered.FromPairs("name", "ctx", "debug", true)}, states.True, "", `{"diff":"New file"` + newMode + `}`},
		step{"file.managed", false, []any{"name", tpl, "source", "salt://tpl/app.ini", "template", "jinja",
			"defaults", ordered.FromPairs("name", "dflt", "port", 80, "debug", false),
			"context", ordered.FromPairs("name", "ctx", "debug", true)}, states.True, "File " + tpl + " is in the correct state", `{}`},
		step{"file.managed", false, []any{"name", f, "contents", "{{ pillar['motd'] }} {{ x }}", "template", "jinja",
			"context", ordered.FromPairs("x", 1)}, states.True, "",
			`{"diff":"--- \n+++ \n@@ -1 +1 @@\n-hello\n+hello 1\n"}`},
	)
	if got, want := readFile(t, tpl), "[app]\nname = ctx\nport = 80\nfamily = Debian\ndebug = on\nid = minion1\n"; got != want {
		t.Errorf("template:\n%s", cmp.Diff(want, got))
	}
}

func TestManagedModeAndOwner(t *testing.T) {
	h := newHarness(t)
	f := h.p("m")
	writeFile(t, f, "x\n", 0o644)
	h.check(
		step{"file.managed", true, []any{"name", f, "contents", "x", "mode", 751}, states.None, "", `{"mode":"0751"}`},
		step{"file.managed", false, []any{"name", f, "contents", "x", "mode", 751}, states.True, "File " + f + " updated", `{"mode":"0751"}`},
		step{"file.managed", false, []any{"name", f, "contents", "x", "mode", "0751"}, states.True, "File " + f + " is in the correct state", `{}`},
		// Salt leaves the comment empty when replace: False changes the mode.
		step{"file.managed", false, []any{"name", f, "replace", false, "mode", "0600"}, states.True, "", `{"mode":"0600"}`},
		step{"file.managed", false, []any{"name", f, "replace", false, "mode", "0600"}, states.True,
			"File " + f + " exists with proper permissions. No changes made.", `{}`},
		step{"file.managed", true, []any{"name", f, "replace", false, "mode", "0644"}, states.None,
			"File " + f + " will be updated with permissions 0644 from its current state of 0600", `{"mode":"0644"}`},
	)
	// makedirs with mode: the parents get the mode plus execute bits.
	deep := h.p("a/b/file")
	// The new file is created under umask 077 and then given its mode.
	h.check(step{"file.managed", false, []any{"name", deep, "contents", "x", "makedirs", true, "mode", "0640"}, states.True, "", `{"diff":"New file","mode":"0640"}`})
	if m := modeOf(t, h.p("a/b")); m != "0750" {
		t.Errorf("parent mode = %s, want 0750", m)
	}
	if m := modeOf(t, deep); m != "0640" {
		t.Errorf("file mode = %s", m)
	}
	testhosts.RequireRoot(t, "ownership")
	h.check(
		step{"file.managed", false, []any{"name", f, "contents", "x", "user", "nobody", "group", "nogroup"}, states.True, "",
			`{"user":"nobody","group":"nogroup"}`},
		step{"file.managed", false, []any{"name", f, "contents", "x", "user", "nobody", "group", "nogroup"}, states.True, "", `{}`},
		step{"file.managed", false, []any{"name", f, "contents", "x", "user", "no-such-user-x"}, states.False,
			"User no-such-user-x is not available ", `{}`},
	)
}

func TestManagedBackup(t *testing.T) {
	h := newHarness(t)
	f := h.p("b.conf")
	writeFile(t, f, "old\n", 0o640)
	h.check(step{"file.managed", false, []any{"name", f, "contents", "new", "backup", "minion"}, states.True, "", ""})
	root := filepath.Join(h.env.Opts.Value("cachedir").(string), "file_backup", strings.TrimPrefix(h.dir, "/"))
	ents, err := os.ReadDir(root)
	if err != nil || len(ents) != 1 || !strings.HasPrefix(ents[0].Name(), "b.conf_") {
		t.Fatalf("backups = %v, %v", ents, err)
	}
	if got := readFile(t, filepath.Join(root, ents[0].Name())); got != "old\n" {
		t.Errorf("backup = %q", got)
	}
	if m := modeOf(t, f); m != "0640" {
		t.Errorf("mode after replace = %s, want 0640 kept", m)
	}
}

func TestManagedSymlink(t *testing.T) {
	h := newHarness(t)
	target, link := h.p("target"), h.p("link")
	writeFile(t, target, "old\n", 0o644)
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	h.check(
		step{"file.managed", false, []any{"name", link, "contents", "new"}, states.True, "File " + link + " updated",
			`{"diff":"--- \n+++ \n@@ -1 +1 @@\n-old\n+new\n"}`},
		step{"file.managed", false, []any{"name", link, "contents", "newer", "follow_symlinks", false}, states.True, "File " + link + " updated",
			`{"diff":"Replace symbolic link with regular file"}`},
	)
	if readFile(t, target) != "new\n" || isLink(link) || readFile(t, link) != "newer\n" {
		t.Errorf("target %q, link is link %v", readFile(t, target), isLink(link))
	}
}

func TestManagedCheckCmd(t *testing.T) {
	h := newHarness(t)
	f, tmp := h.p("c.conf"), t.TempDir()
	writeFile(t, f, "good\n", 0o644)
	h.check(
		step{"file.managed", false, []any{"name", f, "contents", "bad", "check_cmd", "grep -q good", "tmp_dir", tmp}, states.False,
			"check_cmd execution failed", `{}`},
		step{"file.managed", false, []any{"name", f, "contents", "good too", "check_cmd", "grep -q good", "tmp_dir", tmp}, states.True,
			"File " + f + " updated", `{"diff":"--- \n+++ \n@@ -1 +1 @@\n-good\n+good too\n"}`},
	)
	if got := readFile(t, f); got != "good too\n" {
		t.Errorf("content = %q", got)
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Errorf("temporary files left: %v", ents)
	}
}

func fmodUser(p string) (any, error) {
	st, err := file.Stats(p, "", false)
	if err != nil {
		return nil, err
	}
	return st.User, nil
}

func TestManagedKeepMode(t *testing.T) {
	h := newHarness(t)
	h.salt("bin/tool", "#!/bin/sh\n")
	if err := os.Chmod(filepath.Join(h.roots, "bin/tool"), 0o750); err != nil {
		t.Fatal(err)
	}
	f := h.p("tool")
	h.check(
		step{"file.managed", false, []any{"name", f, "source", "salt://bin/tool", "mode", "keep"}, states.True, "", `{"diff":"New file","mode":"0750"}`},
		step{"file.managed", true, []any{"name", f, "source", "salt://bin/tool", "mode", "keep"}, states.True, "The file " + f + " is in the correct state", `{}`},
		step{"file.managed", false, []any{"name", f, "contents", "x", "mode", "keep"}, states.False,
			"Mode preservation cannot be used in combination with 'contents', 'contents_pillar', or 'contents_grains'", ""},
	)
}

// TestManagedRemote serves a file over HTTP to a cp.cache_file stand-in
// and checks source_hash verification.
func TestManagedRemote(t *testing.T) {
	h := newHarness(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/app.tar":
			fmt.Fprint(w, "payload\n")
		case "/SHA256SUMS":
			fmt.Fprint(w, "0000000000000000000000000000000000000000000000000000000000000000  other.tar\n"+
				"d4e4877bac978b7952f0d544fc52ebff5411d351d129f1f056fa43f11da9af2b  app.tar\n")
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	cache := t.TempDir()
	fetches := 0
	h.env.Registry.Register(modules.Function{Name: "cp.cache_file",
		Spec: modules.Spec{Params: []modules.Param{{Name: "path"}, {Name: "saltenv", Optional: true}}, VarKw: true},
		Fn: func(_ context.Context, c *modules.Call) (any, error) {
			fetches++
			resp, err := http.Get(c.Str("path"))
			if err != nil || resp.StatusCode != 200 {
				return false, nil
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			p := filepath.Join(cache, filepath.Base(c.Str("path")))
			return p, os.WriteFile(p, b, 0o644)
		}})
	sum := "d4e4877bac978b7952f0d544fc52ebff5411d351d129f1f056fa43f11da9af2b"
	if got, _ := file.HashBytes([]byte("payload\n"), "sha256"); got != sum {
		t.Fatalf("fixture hash = %s", got)
	}
	f, url := h.p("app.tar"), srv.URL+"/app.tar"
	bad := strings.Repeat("1", 64)
	h.check(
		step{"file.managed", false, []any{"name", f, "source", url}, states.False,
			"Unable to verify upstream hash of source file " + url + ", please set source_hash or set skip_verify to True", `{}`},
		step{"file.managed", false, []any{"name", f, "source", url, "source_hash", "sha256=" + bad}, states.False,
			"Specified sha256 checksum for " + f + " (" + bad + ") does not match actual checksum (" + sum + ")", `{}`},
		step{"file.managed", false, []any{"name", f, "source", url, "source_hash", "md5=abc"}, states.False, "", `{}`},
		step{"file.managed", false, []any{"name", f, "source", url, "source_hash", srv.URL + "/SHA256SUMS"}, states.True,
			"File " + f + " updated", ""},
	)
	before := fetches
	h.check(step{"file.managed", false, []any{"name", f, "source", url, "source_hash", sum}, states.True,
		"File " + f + " exists with proper permissions. No changes made.", `{}`})
	if fetches != before {
		t.Errorf("a matching source_hash still downloaded the file")
	}
	h.check(step{"file.managed", false, []any{"name", h.p("skip"), "source", url, "skip_verify", true}, states.True, "", ""})
	if got := readFile(t, f); got != "payload\n" {
		t.Errorf("content = %q", got)
	}
}

func TestManagedTemplateError(t *testing.T) {
	h := newHarness(t)
	h.salt("bad.tpl", "{{ nope }}\n")
	res := h.run("file.managed", false, "name", h.p("x"), "source", "salt://bad.tpl", "template", "jinja")
	if res.Result != states.False || !strings.HasPrefix(res.Comment, "Unable to manage file: Jinja variable 'nope' is undefined") {
		t.Errorf("result %v, comment %q", res.Result.Value(), res.Comment)
	}
	if pathExists(h.p("x")) {
		t.Errorf("file created despite the template error")
	}
}
