package protocol

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
)

// goldenCases mirror testdata/msgpack_vectors.py. want is what Unmarshal
// returns when it differs from the packed value.
var goldenCases = []struct {
	name string
	v    any
	want any
}{
	{name: "nil", v: nil}, {name: "true", v: true}, {name: "false", v: false},
	{name: "int_0", v: 0}, {name: "int_127", v: 127}, {name: "int_128", v: 128},
	{name: "int_255", v: 255}, {name: "int_256", v: 256}, {name: "int_65535", v: 65535},
	{name: "int_65536", v: 65536}, {name: "int_u32max", v: math.MaxUint32}, {name: "int_2p32", v: 1 << 32},
	{name: "int_i64max", v: math.MaxInt64}, {name: "int_u64max", v: uint64(math.MaxUint64)},
	{name: "int_m1", v: -1}, {name: "int_m32", v: -32}, {name: "int_m33", v: -33},
	{name: "int_m128", v: -128}, {name: "int_m129", v: -129}, {name: "int_m32768", v: -32768},
	{name: "int_m32769", v: -32769}, {name: "int_m2p31", v: math.MinInt32},
	{name: "int_m2p31m1", v: math.MinInt32 - 1}, {name: "int_i64min", v: math.MinInt64},
	{name: "float_1_5", v: 1.5}, {name: "float_m0", v: math.Copysign(0, -1)}, {name: "float_1e300", v: 1e300},
	{name: "str_empty", v: ""}, {name: "str_a", v: "a"}, {name: "str_31", v: strings.Repeat("x", 31)},
	{name: "str_32", v: strings.Repeat("y", 32)}, {name: "str_255", v: strings.Repeat("z", 255)},
	{name: "str_256", v: strings.Repeat("w", 256)}, {name: "str_65536", v: strings.Repeat("v", 65536)},
	{name: "str_unicode", v: "h\u00e9llo \u2603"},
	{name: "bytes_ff", v: []byte{0xff, 0xfe, 0x00}},
	{name: "list_mixed", v: []any{1, "two", nil, true, 2.5, []any{}, ordered.New()}},
	{name: "map_ordered", v: ordered.FromPairs("b", 1, "a", []any{1, 2}, "c", ordered.FromPairs("z", nil, "y", "x"))},
	{name: "map_intkey", v: ordered.FromPairs(1, "one", "2", 2)},
	{name: "list_16", v: seq(16)},
	{name: "map_16", v: map16()},
	{name: "datetime", v: time.Date(2026, 12, 1, 1, 2, 3, 456789000, time.UTC)},
	{name: "constant", v: Constant{Name: "SENTINEL", Value: 3}},
	{name: "bigint_str", v: new(big.Int).Lsh(big.NewInt(1), 64), want: "18446744073709551616"},
}

var goldenBinCases = []struct {
	name string
	v    any
}{
	{"bin_str_32", strings.Repeat("y", 32)},
	{"bin_bytes", []byte{0xff, 0xfe, 0x00}},
	{"bin_map", ordered.FromPairs("tag", "salt/auth", "data", []byte{0, 1})},
}

func seq(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = i
	}
	return out
}

func map16() *ordered.Map {
	m := ordered.New()
	for i := range 16 {
		m.Set("k"+string(rune('0'+i/10))+string(rune('0'+i%10)), i)
	}
	return m
}

func loadVectors(t *testing.T) map[string]map[string]string {
	t.Helper()
	data, err := os.ReadFile("testdata/msgpack_vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]map[string]string
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// cmpOpts compares decoded values: ordered maps by their ordered pairs.
var cmpOpts = cmp.Options{
	cmp.Transformer("pairs", func(m *ordered.Map) [][2]any {
		var out [][2]any
		m.Range(func(k, v any) bool { out = append(out, [2]any{k, v}); return true })
		return out
	}),
	cmp.Comparer(func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }),
}

func TestGoldenWire(t *testing.T) {
	vec := loadVectors(t)
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			want, ok := vec["wire"][tc.name]
			if !ok {
				t.Fatalf("no vector %s", tc.name)
			}
			got, err := Marshal(tc.v)
			if err != nil {
				t.Fatal(err)
			}
			if hex.EncodeToString(got) != want {
				t.Errorf("Marshal = %x, Python packs %s", got, want)
			}
			raw, _ := hex.DecodeString(want)
			dec, err := Unmarshal(raw)
			if err != nil {
				t.Fatal(err)
			}
			exp := tc.v
			if tc.want != nil {
				exp = tc.want
			}
			if d := cmp.Diff(exp, dec, cmpOpts); d != "" {
				t.Errorf("Unmarshal (-want +got):\n%s", d)
			}
		})
	}
}

func TestGoldenBin(t *testing.T) {
	vec := loadVectors(t)
	for _, tc := range goldenBinCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := MarshalBin(tc.v)
			if err != nil {
				t.Fatal(err)
			}
			if want := vec["bin"][tc.name]; hex.EncodeToString(got) != want {
				t.Errorf("MarshalBin = %x, Python packs %s", got, want)
			}
			dec, err := Decoder{BinType: true}.Unmarshal(got)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.v, dec, cmpOpts); d != "" {
				t.Errorf("Unmarshal (-want +got):\n%s", d)
			}
		})
	}
}

func TestDecodeText(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		want any
	}{
		{"raw utf8 is text", []byte{0xa2, 'h', 'i'}, "hi"},
		{"raw non-utf8 is bytes", []byte{0xa1, 0xff}, []byte{0xff}},
		{"bin utf8 is text on the wire", []byte{0xc4, 2, 'h', 'i'}, "hi"},
		{"str8 accepted", []byte{0xd9, 1, 'a'}, "a"},
		{"surrogate is bytes", []byte{0xa3, 0xed, 0xa0, 0x80}, []byte{0xed, 0xa0, 0x80}},
		{"non-utf8 key is BinKey", []byte{0x81, 0xa1, 0xff, 0x01}, ordered.FromPairs(BinKey("\xff"), 1)},
		{"float32 widens", []byte{0xca, 0x3f, 0xc0, 0, 0}, 1.5},
		{"unknown ext is its data", []byte{0xd4, 5, 'x'}, "x"},
		{"duplicate key keeps first position, last value", []byte{0x83, 0xa1, 'a', 1, 0xa1, 'b', 2, 0xa1, 'a', 3},
			ordered.FromPairs("a", 3, "b", 2)},
		{"datetime short fraction", append([]byte{0xc7, 19, 78}, "20260101T00:00:00.5"...),
			time.Date(2026, 1, 1, 0, 0, 0, 500000000, time.UTC)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Unmarshal(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got, cmpOpts); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		want error
	}{
		{"empty", nil, ErrMalformed},
		{"reserved byte", []byte{0xc1}, ErrMalformed},
		{"truncated str", []byte{0xa5, 'a'}, ErrMalformed},
		{"huge array count", []byte{0xdd, 0xff, 0xff, 0xff, 0xff}, ErrMalformed},
		{"huge map count", []byte{0xdf, 0x7f, 0xff, 0xff, 0xff, 0}, ErrMalformed},
		{"extra data", []byte{0x01, 0x02}, ErrMalformed},
		{"list key", []byte{0x81, 0x90, 0x01}, ErrMalformed},
		{"bad datetime", append([]byte{0xc7, 3, 78}, "abc"...), ErrMalformed},
		{"bad constant", []byte{0xd4, 79, 0x01}, ErrMalformed},
		{"too deep", deep(DefaultMaxDepth + 2), ErrMalformed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Unmarshal(tc.in)
			if !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
		})
	}
	if _, err := (Decoder{MaxSize: 4}).Unmarshal(make([]byte, 5)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("size limit: err = %v", err)
	}
}

func deep(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = 0x91
	}
	return append(b, 0xc0)
}

func TestMarshalUnsupported(t *testing.T) {
	if _, err := Marshal(struct{}{}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("err = %v", err)
	}
}

func FuzzUnmarshal(f *testing.F) {
	vec := map[string]map[string]string{}
	if data, err := os.ReadFile("testdata/msgpack_vectors.json"); err == nil {
		_ = json.Unmarshal(data, &vec)
	}
	for _, group := range vec {
		for name, h := range group {
			if strings.HasPrefix(name, "str_6") {
				continue
			}
			b, _ := hex.DecodeString(h)
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Unmarshal(data)
		if err != nil {
			return
		}
		// Whatever decodes must pack again and decode to the same value.
		b, err := Marshal(v)
		if err != nil {
			t.Fatalf("repack %#v: %v", v, err)
		}
		v2, err := Unmarshal(b)
		if err != nil {
			t.Fatalf("decode repacked: %v", err)
		}
		if d := cmp.Diff(v, v2, cmpOpts); d != "" {
			t.Fatalf("round trip differs:\n%s", d)
		}
	})
}

// TestPythonRandomReencode decodes values msgpack-python packed and packs
// them again: the bytes must be identical, wire and bin-type alike.
func TestPythonRandomReencode(t *testing.T) {
	data, err := os.ReadFile("testdata/msgpack_random.json")
	if err != nil {
		t.Fatal(err)
	}
	var vec struct{ Wire, Bin []string }
	if err := json.Unmarshal(data, &vec); err != nil {
		t.Fatal(err)
	}
	check := func(kind string, i int, h string, dec Decoder, enc func(any) ([]byte, error)) {
		in, _ := hex.DecodeString(h)
		v, err := dec.Unmarshal(in)
		if err != nil {
			t.Fatalf("%s %d: decode: %v", kind, i, err)
		}
		out, err := enc(v)
		if err != nil {
			t.Fatalf("%s %d: encode: %v", kind, i, err)
		}
		if !bytes.Equal(in, out) {
			at := 0
			for at < len(in) && at < len(out) && in[at] == out[at] {
				at++
			}
			lo := max(at-8, 0)
			t.Errorf("%s %d: re-encoded bytes differ at %d: in …%x…, out …%x…", kind, i, at,
				in[lo:min(at+16, len(in))], out[lo:min(at+16, len(out))])
		}
	}
	for i, h := range vec.Wire {
		check("wire", i, h, Decoder{}, Marshal)
	}
	for i, h := range vec.Bin {
		check("bin", i, h, Decoder{BinType: true}, MarshalBin)
	}
}

func TestNaNKeyRefused(t *testing.T) {
	if _, err := Unmarshal([]byte{0x81, 0xcb, 0x7f, 0xf8, 0, 0, 0, 0, 0, 1, 0x01}); !errors.Is(err, ErrMalformed) {
		t.Errorf("err = %v", err)
	}
}
