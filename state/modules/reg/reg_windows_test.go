package reg

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
)

func newEnv() *modules.Env {
	return &modules.Env{Pillar: ordered.New(), Opts: ordered.New(), Registry: modules.Default,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Context: map[string]any{}}
}

func run(t *testing.T, fun string, kv ...any) any {
	t.Helper()
	got, err := newEnv().Run(context.Background(), fun, nil, ordered.FromPairs(kv...))
	if err != nil {
		t.Fatalf("%s: %v", fun, err)
	}
	return got
}

// TestWindowsRegistry writes, reads, lists and deletes values of every
// type under a key of its own in HKCU, through the registered functions.
func TestWindowsRegistry(t *testing.T) {
	key := fmt.Sprintf(`Software\BrineTest%d`, os.Getpid())
	t.Cleanup(func() { DeleteKeyRecursive("HKCU", key, 0) })
	cases := []struct {
		vname, vtype string
		vdata, want  any
	}{
		{"sz", "REG_SZ", "hello", "hello"},
		{"expand", "REG_EXPAND_SZ", `%SystemRoot%\x`, `%SystemRoot%\x`},
		{"dword", "REG_DWORD", "42", 42},
		{"qword", "REG_QWORD", 1 << 40, 1 << 40},
		{"multi", "REG_MULTI_SZ", []any{"a", "b"}, []any{"a", "b"}},
		{"bin", "REG_BINARY", "raw", "raw"},
	}
	for _, c := range cases {
		if got := run(t, "reg.set_value", "hive", "HKCU", "key", key, "vname", c.vname, "vdata", c.vdata, "vtype", c.vtype); got != true {
			t.Fatalf("set_value %s = %v", c.vname, got)
		}
		got := run(t, "reg.read_value", "hive", "HKCU", "key", key, "vname", c.vname).(*ordered.Map)
		want := ordered.FromPairs("hive", "HKCU", "key", key, "vname", c.vname, "vdata", c.want, "vtype", c.vtype, "success", true)
		if diff := cmp.Diff(pairs(want), pairs(got)); diff != "" {
			t.Errorf("read_value %s (-want +got):\n%s", c.vname, diff)
		}
	}
	if got := run(t, "reg.value_exists", "hive", "HKCU", "key", key, "vname", "sz"); got != true {
		t.Errorf("value_exists sz = %v", got)
	}
	if got := len(run(t, "reg.list_values", "hive", "HKCU", "key", key).([]any)); got != len(cases) {
		t.Errorf("list_values: %d values, want %d", got, len(cases))
	}
	missing := run(t, "reg.read_value", "hive", "HKCU", "key", key, "vname", "nope").(*ordered.Map)
	if missing.Value("success") != false || missing.Value("comment") != `Cannot find nope in HKCU\`+key {
		t.Errorf("read_value of a missing value = %v", pairs(missing))
	}
	def := run(t, "reg.read_value", "hive", "HKCU", "key", key).(*ordered.Map)
	if def.Value("vname") != "(Default)" || def.Value("vdata") != "(value not set)" {
		t.Errorf("read_value of the unset default = %v", pairs(def))
	}
	if got := run(t, "reg.delete_value", "hive", "HKCU", "key", key, "vname", "sz"); got != true {
		t.Errorf("delete_value = %v", got)
	}
	if got := run(t, "reg.delete_value", "hive", "HKCU", "key", key, "vname", "sz"); got != nil {
		t.Errorf("delete_value again = %v, want None", got)
	}
	run(t, "reg.set_value", "hive", "HKCU", "key", key+`\sub\deeper`, "vname", "x", "vdata", "1")
	if got := run(t, "reg.list_keys", "hive", "HKCU", "key", key); !cmp.Equal(got, []any{"sub"}) {
		t.Errorf("list_keys = %v", got)
	}
	del := run(t, "reg.delete_key_recursive", "hive", "HKCU", "key", key).(*ordered.Map)
	if n := len(del.Value("Deleted").([]any)); n != 3 || len(del.Value("Failed").([]any)) != 0 {
		t.Errorf("delete_key_recursive = %v", pairs(del))
	}
	if got := run(t, "reg.key_exists", "hive", "HKCU", "key", key); got != false {
		t.Errorf("key_exists after delete = %v", got)
	}
	if _, err := newEnv().Run(context.Background(), "reg.read_value", nil, ordered.FromPairs("hive", "HKXX", "key", "x")); err == nil ||
		err.Error() != "Invalid Hive: HKXX" {
		t.Errorf("bad hive: %v", err)
	}
}

func pairs(m *ordered.Map) []any {
	var out []any
	m.Range(func(k, v any) bool { out = append(out, k, v); return true })
	return out
}
