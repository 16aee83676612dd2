package protocol

import (
	"errors"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/google/go-cmp/cmp"
)

func TestUnmarshalMapOmitting(t *testing.T) {
	big := ordered.New()
	for i := range 300 {
		big.Set(i, ordered.FromPairs("Function", "test.ping", "Arguments", []any{1.5, []byte{0xff}, nil, true, int64(-1) << 40},
			"When", time.Date(2026, 12, 2, 1, 2, 3, 4000, time.UTC), "Constant", Constant{Name: "x", Value: "y"}))
	}
	load := ordered.FromPairs("id", "m_master", "return", ordered.FromPairs("return", big, "success", true),
		"fun", "runner.jobs.list_jobs", "user", "root", "arg", []any{"a", uint64(1) << 63})
	b, err := Marshal(load)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decoder{}.UnmarshalMapOmitting(b, "return")
	if err != nil {
		t.Fatal(err)
	}
	want := ordered.FromPairs("id", "m_master", "fun", "runner.jobs.list_jobs", "user", "root", "arg", []any{"a", uint64(1) << 63})
	if d := cmp.Diff(want, got, cmpOpts); d != "" {
		t.Fatalf("omitting return:\n%s", d)
	}
	for _, bad := range [][]byte{b[:len(b)-1], append(append([]byte{}, b...), 0xc0), {0x91, 0xc0}, {0xc1}, {}} {
		if _, err := (Decoder{}).UnmarshalMapOmitting(bad, "return"); !errors.Is(err, ErrMalformed) {
			t.Errorf("% x…: %v, want ErrMalformed", bad[:min(len(bad), 4)], err)
		}
	}
	if _, err := (Decoder{MaxSize: 10}).UnmarshalMapOmitting(b, "return"); !errors.Is(err, ErrTooLarge) {
		t.Errorf("over MaxSize: %v", err)
	}
	if _, err := (Decoder{MaxDepth: 2}).UnmarshalMapOmitting(b, "return"); !errors.Is(err, ErrMalformed) {
		t.Errorf("omitted value deeper than MaxDepth: %v", err)
	}
}

// FuzzUnmarshalMapOmitting: whatever Unmarshal decodes to a map,
// UnmarshalMapOmitting decodes to the same map without the omitted key;
// what Unmarshal refuses for its size or framing it refuses too.
func FuzzUnmarshalMapOmitting(f *testing.F) {
	for _, v := range []any{
		ordered.FromPairs("return", []any{1, "x", ordered.FromPairs("a", 1.5)}, "fun", "f"),
		ordered.FromPairs("jid", "1", "return", time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC), "b", []byte{0xff}),
		ordered.FromPairs("return", Constant{Name: "n", Value: 1}, 7, nil),
		[]any{"return", 1},
	} {
		b, err := Marshal(v)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{0x81, 0xa6, 'r', 'e', 't', 'u', 'r', 'n', 0xdc, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Unmarshal(data)
		got, gerr := Decoder{}.UnmarshalMapOmitting(data, "return")
		if err != nil {
			return
		}
		m, ok := v.(*ordered.Map)
		if !ok {
			if gerr == nil {
				t.Fatalf("a %T decoded as a map", v)
			}
			return
		}
		if gerr != nil {
			t.Fatalf("Unmarshal reads the map, UnmarshalMapOmitting: %v", gerr)
		}
		m.Delete("return")
		if d := cmp.Diff(m, got, cmpOpts); d != "" {
			t.Fatalf("differs:\n%s", d)
		}
	})
}
