package file

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
)

func TestNormalizeMode(t *testing.T) {
	tests := []struct {
		in   any
		want string
		ok   bool
	}{
		{nil, "", false},
		{644, "0644", true},
		{"644", "0644", true},
		{"0644", "0644", true},
		{"00644", "0644", true},
		{"0o750", "0750", true},
		{"'0600'", "0600", true},
		{4755, "4755", true},
		{0, "0000", true},
		{"0", "0000", true},
	}
	for _, tc := range tests {
		got, ok := NormalizeMode(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("NormalizeMode(%#v) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestParseMode(t *testing.T) {
	for in, want := range map[string]os.FileMode{"0644": 0o644, "755": 0o755, "0": 0, "4755": 0o755 | os.ModeSetuid, "1777": 0o777 | os.ModeSticky} {
		got, err := ParseMode(in)
		if err != nil || got != want {
			t.Errorf("ParseMode(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"9", "abc", "77777"} {
		if _, err := ParseMode(bad); err == nil || !strings.HasPrefix(err.Error(), "Invalid Mode") {
			t.Errorf("ParseMode(%q) err = %v, want Invalid Mode", bad, err)
		}
	}
}

// The expectations come from CPython's difflib.unified_diff over
// readlines(), as salt.modules.file.get_diff calls it.
func TestDiff(t *testing.T) {
	tests := []struct{ a, b, want string }{
		{"a\nb\nc\n", "a\nB\nc\n", "--- \n+++ \n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"},
		{"x\ny", "x\ny\nz\n", "--- \n+++ \n@@ -1,2 +1,3 @@\n x\n-y+y\n+z\n"},
		{"", "new\n", "--- \n+++ \n@@ -0,0 +1 @@\n+new\n"},
		{"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n", "1\n2\nthree\n4\n5\n6\n7\n8\nnine\n10\n",
			"--- \n+++ \n@@ -1,10 +1,10 @@\n 1\n 2\n-3\n+three\n 4\n 5\n 6\n 7\n 8\n-9\n+nine\n 10\n"},
		{"a\r\nb\r\n", "a\nb\n", "--- \n+++ \n@@ -1,2 +1,2 @@\n-a\r\n-b\r\n+a\n+b\n"},
		{"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n", "1\nX\n3\n4\n5\n6\n7\n8\n9\n10\n11\nY\n",
			"--- \n+++ \n@@ -1,5 +1,5 @@\n 1\n-2\n+X\n 3\n 4\n 5\n@@ -9,4 +9,4 @@\n 9\n 10\n 11\n-12\n+Y\n"},
		{"same\n", "same\n", ""},
		{"text\n", "bin\x00", "Replace text file with binary file"},
	}
	for _, tc := range tests {
		if got := Diff([]byte(tc.a), []byte(tc.b)); got != tc.want {
			t.Errorf("Diff(%q, %q):\n%s", tc.a, tc.b, cmp.Diff(tc.want, got))
		}
	}
	// file.append joins difflib's lines with "\n" (notes item 36).
	got := strings.Join(UnifiedDiff([]string{"a", "b"}, []string{"a", "b", "c", "d"}, "\n"), "\n")
	if want := "--- \n\n+++ \n\n@@ -1,2 +1,4 @@\n\n a\n b\n+c\n+d"; got != want {
		t.Errorf("append-style diff:\n%s", cmp.Diff(want, got))
	}
}

func TestSubn(t *testing.T) {
	tests := []struct {
		pat, repl, in string
		count, flags  int
		want          string
		n             int
	}{
		{`^port=\d+$`, "port=8080", "port=80\nhost=x\n", 0, 8, "port=8080\nhost=x\n", 1},
		{`(\w+)=(\w+)`, `\2=\1`, "a=b c=d", 0, 0, "b=a d=c", 2},
		{`(?P<k>\w+)=`, `\g<k>:`, "a=1", 0, 0, "a:1", 1},
		{`x`, `y`, "xxx", 2, 0, "yyx", 2},
		{`A`, `b`, "aA", 0, 2, "bb", 2},
		{`a\Z`, `b`, "aa", 0, 0, "ab", 1},
		{`.`, `\n`, "ab", 1, 0, "\nb", 1},
	}
	for _, tc := range tests {
		re, err := CompilePy(tc.pat, tc.flags)
		if err != nil {
			t.Fatalf("CompilePy(%q): %v", tc.pat, err)
		}
		parts, err := ParseRepl(re, tc.repl)
		if err != nil {
			t.Fatalf("ParseRepl(%q): %v", tc.repl, err)
		}
		got, n := Subn(re, parts, []byte(tc.in), tc.count)
		if string(got) != tc.want || n != tc.n {
			t.Errorf("subn(%q, %q, %q) = %q, %d; want %q, %d", tc.pat, tc.repl, tc.in, got, n, tc.want, tc.n)
		}
	}
	for _, bad := range []string{`(?=x)`, `(a)\1`, `(?<!a)b`} {
		if _, err := CompilePy(bad, 0); err == nil {
			t.Errorf("CompilePy(%q) accepted unsupported syntax", bad)
		}
	}
	re := regexp.MustCompile(`(a)`)
	for _, bad := range []string{`\2`, `\g<nope>`, `\q`} {
		if _, err := ParseRepl(re, bad); err == nil {
			t.Errorf("ParseRepl(%q) accepted a bad template", bad)
		}
	}
}

func TestParseFlags(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want int
	}{{8, 8}, {"IGNORECASE", 2}, {[]any{"m", "S"}, 24}, {nil, 0}} {
		got, err := ParseFlags(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseFlags(%#v) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	if _, err := ParseFlags("BOGUS"); err == nil || err.Error() != "Invalid re flag given: BOGUS" {
		t.Errorf("ParseFlags(BOGUS) err = %v", err)
	}
}

func writeFile(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
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

func TestReplace(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "app.cfg")
	tests := []struct {
		name    string
		in      string
		o       ReplaceOpts
		want    any
		content string
	}{
		{"change", "port=80\nhost=localhost\n", ReplaceOpts{Pattern: `^port=\d+$`, Repl: "port=8080", Flags: 8, ShowChanges: true},
			"--- \n+++ \n@@ -1,2 +1,2 @@\n-port=80\n+port=8080\n host=localhost\n", "port=8080\nhost=localhost\n"},
		{"no match", "a\n", ReplaceOpts{Pattern: `^b$`, Repl: "c", Flags: 8, ShowChanges: true}, "", "a\n"},
		{"dry run", "a\n", ReplaceOpts{Pattern: `a`, Repl: "b", DryRun: true, ShowChanges: true},
			"--- \n+++ \n@@ -1 +1 @@\n-a\n+b\n", "a\n"},
		{"append if not found", "a", ReplaceOpts{Pattern: `^x=.*$`, Repl: "x=1", Flags: 8, AppendIfNotFound: true, ShowChanges: true},
			"--- \n+++ \n@@ -1 +1,2 @@\n-a+a\n+x=1\n", "a\nx=1\n"},
		{"append if not found, already there", "x=1\n", ReplaceOpts{Pattern: `^x=2$`, Repl: "x=1", Flags: 8, AppendIfNotFound: true, ShowChanges: true},
			"", "x=1\n"},
		{"prepend not_found_content", "a\n", ReplaceOpts{Pattern: `^x$`, Repl: "x", Flags: 8, PrependIfNotFound: true,
			NotFoundContent: ptr("# head"), ShowChanges: true}, "--- \n+++ \n@@ -1 +1,2 @@\n+# head\n a\n", "# head\na\n"},
		{"show_changes false", "a\n", ReplaceOpts{Pattern: `a`, Repl: "b"}, true, "b\n"},
		{"search only", "abc\n", ReplaceOpts{Pattern: `b`, SearchOnly: true}, true, "abc\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			writeFile(t, p, tc.in)
			got, err := Replace(p, tc.o)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("return (-want +got):\n%s", diff)
			}
			if c := readFile(t, p); c != tc.content {
				t.Errorf("content = %q, want %q", c, tc.content)
			}
		})
	}
	t.Run("backup", func(t *testing.T) {
		writeFile(t, p, "old\n")
		if _, err := Replace(p, ReplaceOpts{Pattern: "old", Repl: "new", Backup: ".bak"}); err != nil {
			t.Fatal(err)
		}
		if b := readFile(t, p+".bak"); b != "old\n" {
			t.Errorf("backup = %q", b)
		}
	})
	t.Run("missing file", func(t *testing.T) {
		_, err := Replace(filepath.Join(dir, "nope"), ReplaceOpts{Pattern: "a"})
		if err == nil || err.Error() != "File not found: "+filepath.Join(dir, "nope") {
			t.Errorf("err = %v", err)
		}
	})
}

func ptr(s string) *string { return &s }

func TestLine(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	tests := []struct {
		name    string
		in      string
		o       LineOpts
		content string
	}{
		{"ensure after", "a\nb\n", LineOpts{Mode: "ensure", Content: ptr("x"), After: ptr("^a$")}, "a\nx\nb\n"},
		{"ensure after, already there", "a\nx\nb\n", LineOpts{Mode: "ensure", Content: ptr("x"), After: ptr("^a$")}, "a\nx\nb\n"},
		{"ensure before", "a\nb\n", LineOpts{Mode: "ensure", Content: ptr("x"), Before: ptr("b")}, "a\nx\nb\n"},
		{"replace keeps indent", "  key=1\nother\n", LineOpts{Mode: "replace", Content: ptr("key=2"), Match: ptr("key="), Indent: true}, "  key=2\nother\n"},
		{"delete", "a\nb\na\n", LineOpts{Mode: "delete", Match: ptr("^a$")}, "b\n"},
		{"insert at start", "a\n", LineOpts{Mode: "insert", Content: ptr("first"), Location: ptr("start")}, "first\na\n"},
		// Salt 3006 really leaves a blank line and no final newline here.
		{"insert at end", "a\n", LineOpts{Mode: "insert", Content: ptr("last"), Location: ptr("end")}, "a\n\nlast"},
		{"insert after", "a\nb\n", LineOpts{Mode: "insert", Content: ptr("x"), After: ptr("a")}, "a\nx\nb\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			writeFile(t, p, tc.in)
			tc.o.ShowChanges = true
			if _, err := Line(p, tc.o); err != nil {
				t.Fatal(err)
			}
			if c := readFile(t, p); c != tc.content {
				t.Errorf("content = %q, want %q", c, tc.content)
			}
		})
	}
	writeFile(t, p, "a\na\n")
	_, err := Line(p, LineOpts{Mode: "ensure", Content: ptr("x"), After: ptr("a")})
	if err == nil || err.Error() != `Found more than expected occurrences in "after" expression` {
		t.Errorf("err = %v", err)
	}
	if _, err := Line(p, LineOpts{Mode: "bogus", Content: ptr("x")}); err == nil || err.Error() != `Unknown mode: "bogus"` {
		t.Errorf("err = %v", err)
	}
}

func TestWhitespaceSplitRegex(t *testing.T) {
	pat, err := WhitespaceSplitRegex("foo  bar\nbaz")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(pat)
	if !re.MatchString("x\n foo bar   baz\n") {
		t.Errorf("%s does not match reflowed text", re)
	}
	// As in Salt, a line with " only treats ' as a quote.
	if got, err := whitespaceWords(`a "b c" d`); err != nil || !cmp.Equal(got, []string{"a", `"b`, `c"`, "d"}) {
		t.Errorf("whitespaceWords = %q, %v", got, err)
	}
	if got, err := whitespaceWords(`a "b c" 'd'`); err != nil || !cmp.Equal(got, []string{"a", `"b c"`, `'d'`}) {
		t.Errorf("whitespaceWords = %q, %v", got, err)
	}
	// An unclosed quote of the active kind is shlex's ValueError.
	if _, err := WhitespaceSplitRegex(`a ' "b`); err == nil || err.Error() != "No closing quotation" {
		t.Errorf("unclosed quote: err = %v", err)
	}
}

func TestStatsAndPerms(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	writeFile(t, p, "x")
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := Stats(p, "md5", true)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode != "0600" || st.Type != "file" || st.Sum != "9dd4e461268c8034f5c8564e155c67a6" {
		t.Errorf("stats = %+v", st)
	}
	if _, err := Stats(filepath.Join(dir, "nope"), "", true); err == nil || err.Error() != "Path not found: "+filepath.Join(dir, "nope") {
		t.Errorf("err = %v", err)
	}
	ret, perms, err := CheckPerms(p, nil, nil, nil, 751, true, true)
	if err != nil {
		t.Fatal(err)
	}
	if ret.Result != nil || ret.Changes.Value("mode") != "0751" || perms.LMode != "0600" {
		t.Errorf("test-mode check_perms = %+v %+v", ret, perms)
	}
	ret, _, err = CheckPerms(p, nil, nil, nil, "0751", true, false)
	if err != nil || ret.Result != true || ret.Changes.Value("mode") != "0751" {
		t.Errorf("check_perms = %+v, %v", ret, err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o751 {
		t.Errorf("mode = %v", fi.Mode())
	}
	if os.Getuid() == 0 {
		ret, _, err = CheckPerms(p, nil, "nobody", "nogroup", nil, true, false)
		if err != nil || ret.Result != true {
			t.Fatalf("chown: %+v %v", ret, err)
		}
		if diff := cmp.Diff(`{"user":"nobody","group":"nogroup"}`, jsonOf(t, ret.Changes)); diff != "" {
			t.Error(diff)
		}
		ret, _, _ = CheckPerms(p, nil, "no-such-user-x", nil, nil, true, false)
		if ret.Result != false || ret.Comment != "User does not exist\n; Failed to change user to no-such-user-x" {
			t.Errorf("bad user: %+v", ret)
		}
	}
}

func jsonOf(t *testing.T, m *ordered.Map) string {
	t.Helper()
	b, err := m.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestFunctions(t *testing.T) {
	dir := t.TempDir()
	r := modules.NewRegistry()
	Register(r)
	env := &modules.Env{Registry: r, Opts: ordered.New()}
	run := func(fun string, args ...any) any {
		t.Helper()
		v, err := env.Run(context.Background(), fun, args, ordered.New())
		if err != nil {
			t.Fatalf("%s: %v", fun, err)
		}
		return v
	}
	p := filepath.Join(dir, "a.txt")
	run("file.write", p, "one", "two")
	if got := run("file.read", p); got != "one\ntwo\n" {
		t.Errorf("read = %q", got)
	}
	run("file.append", p, "three")
	run("file.prepend", p, "zero")
	if got := readFile(t, p); got != "zero\none\ntwo\nthree\n" {
		t.Errorf("content = %q", got)
	}
	checks := []struct {
		fun  string
		args []any
		want any
	}{
		{"file.file_exists", []any{p}, true},
		{"file.directory_exists", []any{p}, false},
		{"file.contains", []any{p, "two"}, true},
		{"file.contains_regex", []any{p, "^thr"}, true},
		{"file.search", []any{p, "^one$"}, true},
		{"file.get_hash", []any{p, "sha1"}, "99b522169aca3491c9d0527bba920837b2c7831b"},
		{"file.check_hash", []any{p, "sha1:99b522169aca3491c9d0527bba920837b2c7831b"}, true},
		{"file.is_link", []any{p}, false},
		{"file.basename", []any{"/a/b/c.txt"}, "c.txt"},
		{"file.dirname", []any{"/a/b/c.txt"}, "/a/b"},
		{"file.join", []any{"/a", "b", "/c", "d"}, "/c/d"},
		{"file.readdir", []any{dir}, []any{".", "..", "a.txt"}},
		{"file.diskusage", []any{dir}, 19},
		{"file.path_exists_glob", []any{dir + "/*.txt"}, true},
	}
	for _, c := range checks {
		if got := run(c.fun, c.args...); !cmp.Equal(got, c.want) {
			t.Errorf("%s%v = %#v, want %#v", c.fun, c.args, got, c.want)
		}
	}
	run("file.link", p, filepath.Join(dir, "hard"))
	if got := run("file.is_hardlink", p); got != true {
		t.Errorf("is_hardlink = %v", got)
	}
	run("file.truncate", filepath.Join(dir, "hard"), 4)
	if got := readFile(t, p); got != "zero" {
		t.Errorf("truncated = %q", got)
	}
	link := filepath.Join(dir, "l")
	run("file.symlink", p, link)
	if got := run("file.readlink", link); got != p {
		t.Errorf("readlink = %v", got)
	}
	run("file.mkdir", filepath.Join(dir, "d/e"), nil, nil, "0750")
	if got := run("file.get_mode", filepath.Join(dir, "d/e")); got != "0750" {
		t.Errorf("mkdir mode = %v", got)
	}
	got := run("file.find", dir)
	if l, _ := got.([]any); len(l) != 6 {
		t.Errorf("find = %v", got)
	}
	if _, err := env.Run(context.Background(), "file.find", []any{dir}, ordered.FromPairs("type", "d", "name", "e")); err != nil {
		t.Fatal(err)
	}
	if got := run("file.remove", filepath.Join(dir, "d")); got != true {
		t.Errorf("remove = %v", got)
	}
	if got := run("file.remove", filepath.Join(dir, "d")); got != false {
		t.Errorf("second remove = %v", got)
	}
	_, err := env.Run(context.Background(), "file.remove", []any{"relative"}, ordered.New())
	if err == nil || err.Error() != "File path must be absolute: relative" {
		t.Errorf("remove relative: %v", err)
	}
}

func TestSed(t *testing.T) {
	dir := t.TempDir()
	r := modules.NewRegistry()
	Register(r)
	// cmd.run_all and cmd.run stand-ins record the argv and run it.
	var argvs [][]string
	runArgv := func(c *modules.Call) (string, int) {
		var argv []string
		for _, a := range c.Arg("cmd").([]any) {
			argv = append(argv, a.(string))
		}
		argvs = append(argvs, argv)
		out, err := exec.Command(argv[0], argv[1:]...).Output()
		code := 0
		if err != nil {
			code = 1
		}
		return strings.TrimSuffix(string(out), "\n"), code
	}
	cmdSpec := modules.Spec{Params: []modules.Param{{Name: "cmd"}}, VarKw: true}
	r.Register(modules.Function{Name: "cmd.run_all", Spec: cmdSpec, Fn: func(_ context.Context, c *modules.Call) (any, error) {
		out, code := runArgv(c)
		return ordered.FromPairs("retcode", code, "stdout", out), nil
	}})
	r.Register(modules.Function{Name: "cmd.run", Spec: cmdSpec, Fn: func(_ context.Context, c *modules.Call) (any, error) {
		out, _ := runArgv(c)
		return out, nil
	}})
	env := &modules.Env{Registry: r, Opts: ordered.New(), Context: map[string]any{}}
	p := filepath.Join(dir, "s.conf")
	writeFile(t, p, "port 80\nhost a/b\n")
	ctx := context.Background()
	out, err := env.Run(ctx, "file.sed", []any{p, "a/b", "c/d"}, ordered.New())
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := out.(*ordered.Map); !ok || m.Value("retcode") != 0 {
		t.Fatalf("sed = %#v", out)
	}
	if want := []string{"sed", "-i.bak", "-r", "-e", `s/a\/b/c\/d/g`, p}; !cmp.Equal(argvs[0], want) {
		t.Errorf("argv = %q, want %q", argvs[0], want)
	}
	if got := readFile(t, p); got != "port 80\nhost c/d\n" {
		t.Errorf("content = %q", got)
	}
	if got := readFile(t, p+".bak"); got != "port 80\nhost a/b\n" {
		t.Errorf("backup = %q", got)
	}
	for text, want := range map[string]bool{"port": true, "nothing": false} {
		got, err := env.Run(ctx, "file.sed_contains", []any{p, text}, ordered.New())
		if err != nil || got != want {
			t.Errorf("sed_contains(%q) = %v, %v", text, got, err)
		}
	}
}

func TestSourceSum(t *testing.T) {
	env := &modules.Env{Registry: modules.NewRegistry()}
	sha := strings.Repeat("a", 64)
	tests := []struct {
		in, htype, hsum, err string
	}{
		{"sha256=" + strings.ToUpper(sha), "sha256", sha, ""},
		{sha, "sha256", sha, ""},
		{strings.Repeat("b", 32), "md5", strings.Repeat("b", 32), ""},
		{"sha1=" + sha, "", "", "Invalid length (64) for hash type 'sha1'. Either remove the hash type and simply use '" + sha + "' as the source_hash, or change the hash type to 'sha256'"},
		{"crc=" + sha, "", "", "Invalid hash type 'crc'. Supported hash types are: sha512, sha384, sha256, sha224, sha1, md5. Either remove the hash type and simply use '" + sha + "' as the source_hash, or change the hash type to a supported type."},
		{"xyz", "", "", "Source hash xyz format is invalid."},
		{"gopher://x", "", "", "Source hash gopher://x format is invalid."},
	}
	for _, tc := range tests {
		ht, hs, err := SourceSum(context.Background(), env, "/x/app.tar", "https://h/app.tar", tc.in, "", "base")
		if tc.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
				t.Errorf("SourceSum(%q) err = %v, want prefix %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || ht != tc.htype || hs != tc.hsum {
			t.Errorf("SourceSum(%q) = %q, %q, %v", tc.in, ht, hs, err)
		}
	}
	sums := strings.Repeat("1", 64) + "  other.tar\n" + strings.Repeat("2", 64) + " *app.tar\n" + strings.Repeat("3", 40) + "  named\n"
	for _, tc := range []struct{ name, want string }{{"", strings.Repeat("2", 64)}, {"named", strings.Repeat("3", 40)}} {
		_, hs, ok := ExtractHash(sums, "/x/app.tar", "https://h/dl/app.tar", tc.name)
		if !ok || hs != tc.want {
			t.Errorf("ExtractHash(name %q) = %q, %v", tc.name, hs, ok)
		}
	}
	if _, hs, ok := ExtractHash("deadbeef"+strings.Repeat("0", 24)+"\n", "/x/nomatch", "", ""); !ok || len(hs) != 32 {
		t.Errorf("partial match = %q, %v", hs, ok)
	}
}

func TestManagedHelpers(t *testing.T) {
	r := modules.NewRegistry()
	Register(r)
	env := (&modules.Env{Registry: r, Opts: ordered.New()}).WithGrains(ordered.FromPairs("id", "m1"))
	ctx := context.Background()
	got, err := env.Run(ctx, "file.apply_template_on_contents", []any{"{{ grains['id'] }}-{{ x }}", "jinja",
		ordered.FromPairs("x", 2), ordered.FromPairs("x", 1), "base"}, ordered.New())
	if err != nil || got != "m1-2" {
		t.Errorf("apply_template_on_contents = %#v, %v", got, err)
	}
	sum, err := env.Run(ctx, "file.get_source_sum", nil, ordered.FromPairs("source_hash", "md5="+strings.Repeat("A", 32)))
	if err != nil || jsonOf(t, sum.(*ordered.Map)) != `{"hash_type":"md5","hsum":"`+strings.Repeat("a", 32)+`"}` {
		t.Errorf("get_source_sum = %v, %v", sum, err)
	}
	p := filepath.Join(t.TempDir(), "f")
	writeFile(t, p, "a\n")
	meta, err := env.Run(ctx, "file.check_file_meta", []any{p, "", "", nil, nil, nil, 600, nil, "base"}, ordered.FromPairs("contents", "b\n"))
	if err != nil || jsonOf(t, meta.(*ordered.Map)) != `{"diff":"--- \n+++ \n@@ -1 +1 @@\n-a\n+b\n","mode":"0600"}` {
		t.Errorf("check_file_meta = %v, %v", meta, err)
	}
}

func TestBackups(t *testing.T) {
	r := modules.NewRegistry()
	Register(r)
	env := &modules.Env{Registry: r, Opts: ordered.FromPairs("cachedir", t.TempDir())}
	ctx := context.Background()
	p := filepath.Join(t.TempDir(), "conf")
	writeFile(t, p, "v1\n")
	if err := CopyFile([]byte("v2\n"), p, "minion", env.Opts); err != nil {
		t.Fatal(err)
	}
	list, err := env.Run(ctx, "file.list_backups", []any{p}, ordered.New())
	if err != nil || list.(*ordered.Map).Len() != 1 {
		t.Fatalf("list_backups = %v, %v", list, err)
	}
	res, err := env.Run(ctx, "file.restore_backup", []any{p, 0}, ordered.New())
	if err != nil || res.(*ordered.Map).Value("result") != true || readFile(t, p) != "v1\n" {
		t.Fatalf("restore_backup = %v, %v, content %q", res, err, readFile(t, p))
	}
	res, _ = env.Run(ctx, "file.delete_backup", []any{p, "x"}, ordered.New())
	if res.(*ordered.Map).Value("comment") != "Invalid backup_id 'x'" {
		t.Errorf("delete_backup bad id = %v", res)
	}
	res, _ = env.Run(ctx, "file.delete_backup", []any{p, 5}, ordered.New())
	if res.(*ordered.Map).Value("comment") != "backup_id '5' does not exist for "+p {
		t.Errorf("delete_backup missing id = %v", res)
	}
}

func TestManageFileFunction(t *testing.T) {
	r := modules.NewRegistry()
	Register(r)
	env := &modules.Env{Registry: r, Opts: ordered.New()}
	dir := t.TempDir()
	sfn, p := filepath.Join(dir, "cached"), filepath.Join(dir, "out")
	writeFile(t, sfn, "from cache\n")
	got, err := env.Run(context.Background(), "file.manage_file",
		[]any{p, sfn, ordered.New(), "salt://x", ordered.New(), nil, nil, "0640", nil, "base", ""}, ordered.New())
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"name":"` + p + `","changes":{"diff":"New file","mode":"0640"},"result":true,"comment":"File ` + p + ` updated"}`; jsonOf(t, got.(*ordered.Map)) != want {
		t.Errorf("manage_file = %s", jsonOf(t, got.(*ordered.Map)))
	}
	if readFile(t, p) != "from cache\n" {
		t.Errorf("content = %q", readFile(t, p))
	}
}
