package txtar

import (
	"reflect"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	in := "comment\n-- a.sls --\nx: 1\n-- empty --\n-- b --\nno newline"
	a := Parse(in)
	want := Archive{Comment: "comment\n", Files: []File{{"a.sls", "x: 1\n"}, {"empty", ""}, {"b", "no newline"}}}
	if !reflect.DeepEqual(a, want) {
		t.Fatalf("Parse = %#v, want %#v", a, want)
	}
	if got := a.Format(); got != in+"\n" {
		t.Fatalf("Format = %q", got)
	}
	if got := Parse("-- x--\n--  --\n"); len(got.Files) != 0 {
		t.Fatalf("not markers, got files %v", got.Files)
	}
}
