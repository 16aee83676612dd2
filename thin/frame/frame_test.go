package frame

import (
	"bytes"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
)

func TestRoundTripWithNoise(t *testing.T) {
	var out bytes.Buffer
	out.WriteString("Last login: yesterday\n[sudo] lecture\n")
	want := &Result{ID: "web1", JID: "20261201000000000000", Fun: "test.echo",
		Return: ordered.FromPairs("b", 1, "a", []any{"x"}), Retcode: 2}
	if err := Write(&out, want); err != nil {
		t.Fatal(err)
	}
	out.WriteString("trailing noise\n")
	got, err := DecodeResult(out.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b *ordered.Map) bool {
		x, _ := a.MarshalJSON()
		y, _ := b.MarshalJSON()
		return bytes.Equal(x, y)
	})); diff != "" {
		t.Error(diff)
	}
}

func TestFindErrors(t *testing.T) {
	for name, in := range map[string]string{
		"none":      "just text",
		"truncated": "\x00BRINE1 10\n{\"a\":",
		"no header": "\x00BRINE1 10",
	} {
		if _, err := Find([]byte(in)); !errors.Is(err, ErrNoFrame) {
			t.Errorf("%s: err = %v, want ErrNoFrame", name, err)
		}
	}
	if _, err := Find([]byte("\x00BRINE1 -3\n")); err == nil {
		t.Error("negative length accepted")
	}
}

func FuzzFind(f *testing.F) {
	f.Add([]byte("\x00BRINE1 2\n{}\n"))
	f.Add([]byte("noise\x00BRINE1 99999999999\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		body, err := Find(b)
		if err == nil && !bytes.Contains(b, body) {
			t.Fatalf("payload not from input")
		}
		_, _ = DecodeResult(b)
	})
}

func TestReadJob(t *testing.T) {
	j, err := ReadJob(bytes.NewReader([]byte(`{"fun":"test.arg","arg":[1,"a"],"kwarg":{"z":1,"y":2}}`)))
	if err != nil {
		t.Fatal(err)
	}
	if j.Fun != "test.arg" || len(j.Arg) != 2 || j.Kwarg.StringKeys()[0] != "z" {
		t.Errorf("job = %+v", j)
	}
	if _, err := ReadJob(bytes.NewReader([]byte(`{"arg":[]}`))); err == nil {
		t.Error("job without fun accepted")
	}
}
