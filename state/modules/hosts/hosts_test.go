package hosts

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
)

// tempHosts copies the fixture into a temporary directory and returns
// an Env whose hosts.file points at it.
func tempHosts(t *testing.T) (*modules.Env, string) {
	t.Helper()
	b, err := os.ReadFile("testdata/hosts")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "hosts")
	if err := os.WriteFile(p, b, 0o640); err != nil {
		t.Fatal(err)
	}
	return (&modules.Env{Pillar: ordered.New(), Opts: ordered.FromPairs("hosts.file", p),
		Registry: modules.Default, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Context: map[string]any{}}).WithGrains(ordered.New()), p
}

func js(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestRead(t *testing.T) {
	env, _ := tempHosts(t)
	ctx := context.Background()
	tests := []struct {
		fun  string
		args []any
		want string
	}{
		{"hosts.list_hosts", nil, `{"comment-0":["# The following lines are desirable for IPv4 capable hosts"],"127.0.0.1":{"aliases":["localhost","localhost.localdomain"]},"::1":{"aliases":["localhost6"]},"10.0.0.5":{"aliases":["web1","web1.example.com"],"comment":"front end"},"10.0.0.6":{"aliases":["db1","db1-alias"]}}`},
		{"hosts.get_ip", []any{"db1-alias"}, `"10.0.0.6"`},
		{"hosts.get_ip", []any{"nope"}, `""`},
		{"hosts.get_alias", []any{"10.0.0.5"}, `["web1","web1.example.com"]`},
		{"hosts.get_alias", []any{"10.9.9.9"}, `[]`},
		{"hosts.has_pair", []any{"10.0.0.6", "db1"}, `true`},
		{"hosts.has_pair", []any{"10.0.0.6", []any{"db1", "db1-alias"}}, `true`},
		{"hosts.has_pair", []any{"10.0.0.6", []any{"db1", "web1"}}, `false`},
		{"hosts.has_pair", []any{"10.9.9.9", "db1"}, `false`},
	}
	for _, tt := range tests {
		t.Run(tt.fun, func(t *testing.T) {
			got, err := env.Run(ctx, tt.fun, tt.args, nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, js(t, got)); diff != "" {
				t.Error(diff)
			}
		})
	}
}

func TestWrite(t *testing.T) {
	const head = "# The following lines are desirable for IPv4 capable hosts\n127.0.0.1\tlocalhost localhost.localdomain\n::1\t\tlocalhost6\n"
	tests := []struct {
		name   string
		fun    string
		args   []any
		kwargs *ordered.Map
		want   string
	}{
		{"set_host replaces all lines of ip", "hosts.set_host", []any{"10.0.0.6", "db2"}, nil,
			head + "10.0.0.5\tweb1 web1.example.com\t# front end\n10.0.0.6\t\tdb2\n"},
		{"set_host appends with comment", "hosts.set_host", []any{"10.0.0.7", "cache"}, ordered.FromPairs("comment", "new"),
			head + "10.0.0.5\tweb1 web1.example.com\t# front end\n10.0.0.6\tdb1\n10.0.0.6\tdb1-alias\n10.0.0.7\t\tcache\t\t# new\n"},
		{"set_host empty alias removes", "hosts.set_host", []any{"10.0.0.5", " "}, nil,
			head + "10.0.0.6\tdb1\n10.0.0.6\tdb1-alias\n"},
		{"rm_host keeps comment", "hosts.rm_host", []any{"10.0.0.5", "web1"}, nil,
			head + "10.0.0.5\t\tweb1.example.com # front end\n10.0.0.6\tdb1\n10.0.0.6\tdb1-alias\n"},
		{"rm_host drops empty line", "hosts.rm_host", []any{"10.0.0.6", "db1"}, nil,
			head + "10.0.0.5\tweb1 web1.example.com\t# front end\n10.0.0.6\t\tdb1-alias \n"},
		{"add_host rewrites", "hosts.add_host", []any{"10.0.0.6", "db3"}, nil,
			"# The following lines are desirable for IPv4 capable hosts\n127.0.0.1\t\tlocalhost localhost.localdomain\n::1\t\tlocalhost6\n10.0.0.5\t\tweb1 web1.example.com\t\t# front end\n10.0.0.6\t\tdb1 db1-alias db3\n"},
		{"set_comment", "hosts.set_comment", []any{"10.0.0.6", "databases"}, nil,
			"# The following lines are desirable for IPv4 capable hosts\n127.0.0.1\t\tlocalhost localhost.localdomain\n::1\t\tlocalhost6\n10.0.0.5\t\tweb1 web1.example.com\t\t# front end\n10.0.0.6\t\tdb1 db1-alias\t\t# databases\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, p := tempHosts(t)
			got, err := env.Run(context.Background(), tt.fun, tt.args, tt.kwargs)
			if err != nil || got != true {
				t.Fatalf("%s = %v, %v", tt.fun, got, err)
			}
			b, _ := os.ReadFile(p)
			if diff := cmp.Diff(tt.want, string(b)); diff != "" {
				t.Error(diff)
			}
			if st, _ := os.Stat(p); st.Mode().Perm() != 0o640 {
				t.Errorf("mode = %v", st.Mode())
			}
		})
	}
}

func TestMissingFile(t *testing.T) {
	env, p := tempHosts(t)
	os.Remove(p)
	ctx := context.Background()
	if got, _ := env.Run(ctx, "hosts.list_hosts", nil, nil); js(t, got) != `{}` {
		t.Errorf("list_hosts = %s", js(t, got))
	}
	if got, _ := env.Run(ctx, "hosts.set_comment", []any{"1.2.3.4", "x"}, nil); got != false {
		t.Errorf("set_comment = %v", got)
	}
	if _, err := env.Run(ctx, "hosts.add_host", []any{"1.2.3.4", "x"}, nil); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "1.2.3.4\t\tx\n" {
		t.Errorf("file = %q", b)
	}
}

func FuzzParse(f *testing.F) {
	b, _ := os.ReadFile("testdata/hosts")
	f.Add(string(b))
	f.Add("1.2.3.4 a # b # c\n#x\n\n5.6.7.8\n")
	f.Fuzz(func(t *testing.T, s string) {
		once := Format(Parse(s))
		if twice := Format(Parse(once)); twice != once {
			t.Errorf("Format(Parse) not idempotent:\n%q\n%q", once, twice)
		}
	})
}
