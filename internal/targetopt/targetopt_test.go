package targetopt

import (
	"io"
	"reflect"
	"testing"

	"github.com/spf13/pflag"
)

func parse(t *testing.T, kinds []Kind, args ...string) (string, error) {
	t.Helper()
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o := Register(fs, kinds, nil)
	if err := fs.Parse(args); err != nil {
		return "", err
	}
	return o.Type()
}

func TestType(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "glob"},
		{[]string{"-E"}, "pcre"},
		{[]string{"--grain-pcre"}, "grain_pcre"},
		{[]string{"-C"}, "compound"},
		{[]string{"-S"}, "ipcidr"},
		{[]string{"-J"}, "pillar_pcre"},
	} {
		got, err := parse(t, Extended, c.args...)
		if err != nil || got != c.want {
			t.Errorf("%v: got %q, %v; want %q", c.args, got, err, c.want)
		}
	}
	if _, err := parse(t, Basic, "-C"); err == nil {
		t.Error("-C is not a target option of the basic set")
	}
}

func TestMutuallyExclusive(t *testing.T) {
	_, err := parse(t, Extended, "-E", "-G")
	want := "The options --pcre/--grain are mutually exclusive. Please only choose one of them"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %q", err, want)
	}
}

func TestTarget(t *testing.T) {
	for _, c := range []struct {
		arg, kind string
		want      any
	}{
		{"web*", "glob", "web*"},
		{"a,b", "glob", "a,b"},
		{"a, b,c", "list", []any{"a", "b", "c"}},
		{"a b  c", "list", []any{"a", "b", "c"}},
		{"a,,b", "list", []any{"a", "", "b"}},
	} {
		if got := Target(c.arg, c.kind); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Target(%q, %q) = %#v, want %#v", c.arg, c.kind, got, c.want)
		}
	}
}
