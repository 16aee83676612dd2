package cp

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/fileclient"
	"github.com/brinesalt/brine/state/modules"
)

func js(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// getOnly hides the listing methods of a client, as the thin binary's
// file client lacks them.
type getOnly struct{ modules.FileClient }

type fixture struct {
	env   *modules.Env
	roots string
	cache string
}

func newFixture(t testing.TB, listing bool) fixture {
	t.Helper()
	roots, cache := t.TempDir(), t.TempDir()
	for p, c := range map[string]string{
		"top.sls":             "base: {}",
		"web/init.sls":        "nginx: pkg.installed",
		"web/files/site.conf": "server {}",
		"web/files/tpl.j2":    "id={{ grains.id }} role={{ pillar.role }} extra={{ extra }}",
		"data/a.txt":          "A",
		"data/sub/b.txt":      "B",
	} {
		os.MkdirAll(filepath.Join(roots, filepath.Dir(p)), 0o755)
		if err := os.WriteFile(filepath.Join(roots, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fc := fileclient.New(map[string][]string{"base": {roots}, "dev": {t.TempDir()}}, nil)
	var files modules.FileClient = fc
	if !listing {
		files = getOnly{fc}
	}
	env := (&modules.Env{
		Pillar:   ordered.FromPairs("role", "web"),
		Opts:     ordered.FromPairs("cachedir", cache, "file_roots", ordered.FromPairs("base", []any{roots})),
		Registry: modules.Default, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Context: map[string]any{}, Files: files,
	}).WithGrains(ordered.FromPairs("id", "m1"))
	return fixture{env, roots, cache}
}

func (f fixture) run(t *testing.T, fun string, args []any, kw *ordered.Map) any {
	t.Helper()
	got, err := f.env.Run(context.Background(), fun, args, kw)
	if err != nil {
		t.Fatalf("%s %v: %v", fun, args, err)
	}
	return got
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestListings(t *testing.T) {
	for _, listing := range []bool{true, false} {
		f := newFixture(t, listing)
		tests := []struct {
			fun  string
			args []any
			want string
		}{
			{"cp.list_master", nil, `["data/a.txt","data/sub/b.txt","top.sls","web/files/site.conf","web/files/tpl.j2","web/init.sls"]`},
			{"cp.list_master", []any{"base", "web/"}, `["web/files/site.conf","web/files/tpl.j2","web/init.sls"]`},
			{"cp.list_master_dirs", nil, `["data","data/sub","web","web/files"]`},
			{"cp.list_states", nil, `["top","web"]`},
			{"cp.list_master_symlinks", nil, `{}`},
		}
		for _, tt := range tests {
			if diff := cmp.Diff(tt.want, js(t, f.run(t, tt.fun, tt.args, nil))); diff != "" {
				t.Errorf("listing=%v %s: %s", listing, tt.fun, diff)
			}
		}
	}
	f := newFixture(t, true)
	if got := js(t, f.run(t, "cp.envs", nil, nil)); got != `["base","dev"]` {
		t.Errorf("envs = %s", got)
	}
}

func TestGetAndCache(t *testing.T) {
	f := newFixture(t, true)
	dest := t.TempDir()
	if got := f.run(t, "cp.get_file", []any{"salt://web/files/site.conf", dest}, nil); got != filepath.Join(dest, "site.conf") {
		t.Errorf("get_file into dir = %v", got)
	}
	if got := f.run(t, "cp.get_file", []any{"salt://nope", dest + "/x"}, nil); got != "" {
		t.Errorf("get_file missing = %v", got)
	}
	if got := f.run(t, "cp.get_file", []any{"salt://data/a.txt", dest + "/no/such/a"}, nil); got != false {
		t.Errorf("get_file without makedirs = %v", got)
	}
	if got := f.run(t, "cp.get_file", []any{"salt://data/a.txt?saltenv=base", dest + "/mk/a"}, ordered.FromPairs("makedirs", true)); got != dest+"/mk/a" {
		t.Errorf("get_file makedirs = %v", got)
	}
	got := f.run(t, "cp.get_dir", []any{"salt://data", dest + "/tree"}, nil)
	if diff := cmp.Diff(js(t, []string{dest + "/tree/data/a.txt", dest + "/tree/data/sub/b.txt"}), js(t, got)); diff != "" {
		t.Error(diff)
	}
	if read(t, dest+"/tree/data/sub/b.txt") != "B" {
		t.Error("get_dir content")
	}
	tpl := f.run(t, "cp.get_template", []any{"salt://web/files/tpl.j2", dest + "/out.conf"}, ordered.FromPairs("extra", 7))
	if tpl != dest+"/out.conf" || read(t, dest+"/out.conf") != "id=m1 role=web extra=7" {
		t.Errorf("get_template = %v: %q", tpl, read(t, dest+"/out.conf"))
	}

	cached := f.run(t, "cp.cache_file", []any{"salt://web/init.sls"}, nil)
	want := filepath.Join(f.cache, "files/base/web/init.sls")
	if cached != want || read(t, want) != "nginx: pkg.installed" {
		t.Errorf("cache_file = %v", cached)
	}
	if got := f.run(t, "cp.cache_file", []any{"salt://missing"}, nil); got != false {
		t.Errorf("cache_file missing = %v", got)
	}
	if got := f.run(t, "cp.is_cached", []any{"salt://web/init.sls"}, nil); got != want {
		t.Errorf("is_cached = %v", got)
	}
	if got := f.run(t, "cp.is_cached", []any{"salt://top.sls"}, nil); got != "" {
		t.Errorf("is_cached uncached = %v", got)
	}
	if got := f.run(t, "cp.cache_dest", []any{"salt://x/y?saltenv=dev"}, nil); got != filepath.Join(f.cache, "files/dev/x/y") {
		t.Errorf("cache_dest = %v", got)
	}
	files := f.run(t, "cp.cache_files", []any{"salt://top.sls,salt://nope"}, nil)
	if js(t, files) != js(t, []any{filepath.Join(f.cache, "files/base/top.sls"), false}) {
		t.Errorf("cache_files = %s", js(t, files))
	}
	dir := f.run(t, "cp.cache_dir", []any{"salt://data"}, ordered.FromPairs("exclude_pat", "*/sub/*"))
	if js(t, dir) != js(t, []any{filepath.Join(f.cache, "files/base/data/a.txt")}) {
		t.Errorf("cache_dir = %s", js(t, dir))
	}
	local := f.run(t, "cp.cache_local_file", []any{filepath.Join(f.roots, "top.sls")}, nil)
	if local != filepath.Join(f.cache, "localfiles", f.roots, "top.sls") {
		t.Errorf("cache_local_file = %v", local)
	}
	minion := f.run(t, "cp.list_minion", nil, nil).([]any)
	if len(minion) != 4 {
		t.Errorf("list_minion = %v", minion)
	}
}

func TestHashAndURLs(t *testing.T) {
	f := newFixture(t, true)
	h := f.run(t, "cp.hash_file", []any{"salt://data/a.txt"}, nil)
	if js(t, h) != `{"hsum":"559aead08264d5795d3909718cdd05abd49572e84fe55590eef31a88a08fdffd","hash_type":"sha256"}` {
		t.Errorf("hash_file = %s", js(t, h))
	}
	if h := f.run(t, "cp.hash_file", []any{filepath.Join(f.roots, "data/a.txt")}, nil); js(t, h)[:9] != `{"hsum":"` {
		t.Errorf("hash_file local = %s", js(t, h))
	}
	if h := f.run(t, "cp.hash_file", []any{"salt://nope"}, nil); js(t, h) != `{}` {
		t.Errorf("hash_file missing = %s", js(t, h))
	}

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/missing" {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, "payload "+r.URL.Path)
	}))
	defer srv.Close()
	dest := t.TempDir()
	if got := f.run(t, "cp.get_url", []any{srv.URL + "/pkg/a.tgz", dest}, nil); got != filepath.Join(dest, "a.tgz") || read(t, dest+"/a.tgz") != "payload /pkg/a.tgz" {
		t.Errorf("get_url http = %v", got)
	}
	if got := f.run(t, "cp.get_url", []any{srv.URL + "/x", nil}, nil); got != "payload /x" {
		t.Errorf("get_url dest=None = %v", got)
	}
	cached := f.run(t, "cp.cache_file", []any{srv.URL + "/c/d.txt?v=1"}, nil)
	host := strings.ReplaceAll(strings.TrimPrefix(srv.URL, "http://"), ":", "")
	if s, _ := cached.(string); read(t, s) != "payload /c/d.txt" || s != filepath.Join(f.cache, "extrn_files/base", host, "c/d.txt-v=1") {
		t.Errorf("cache_file http = %v", cached)
	}
	if got := f.run(t, "cp.is_cached", []any{srv.URL + "/c/d.txt?v=1"}, nil); got != cached {
		t.Errorf("is_cached http = %v", got)
	}
	if _, err := f.env.Run(context.Background(), "cp.get_url", []any{srv.URL + "/missing", dest}, nil); err == nil {
		t.Error("get_url 404 succeeded")
	}
	if got := f.run(t, "cp.get_url", []any{"salt://data/a.txt", nil}, nil); got != "A" {
		t.Errorf("get_url salt dest=None = %v", got)
	}
	if got := f.run(t, "cp.get_url", []any{"file://" + f.roots + "/top.sls", dest}, nil); got != f.roots+"/top.sls" {
		t.Errorf("get_url file = %v", got)
	}
	if _, err := f.env.Run(context.Background(), "cp.get_url", []any{"relative/path", dest}, nil); err == nil {
		t.Error("relative get_url succeeded")
	}
	if got := f.run(t, "cp.get_file_str", []any{"salt://data/sub/b.txt"}, nil); got != "B" {
		t.Errorf("get_file_str = %v", got)
	}
}

func TestPathTemplate(t *testing.T) {
	f := newFixture(t, true)
	dest := t.TempDir()
	got := f.run(t, "cp.get_file", []any{"salt://{{ pillar.role }}/files/site.conf", dest + "/{{ grains.id }}.conf"},
		ordered.FromPairs("template", "jinja"))
	if got != dest+"/m1.conf" || read(t, dest+"/m1.conf") != "server {}" {
		t.Errorf("templated get_file = %v", got)
	}
	if _, err := f.env.Run(context.Background(), "cp.get_file", []any{"salt://x", dest}, ordered.FromPairs("template", "mako")); err == nil {
		t.Error("mako accepted")
	}
}
