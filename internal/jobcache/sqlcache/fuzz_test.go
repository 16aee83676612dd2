package sqlcache

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
)

// FuzzDecodeStored feeds stored JSON (jids.load, salt_returns.full_ret,
// as Salt or Brine or anyone with SQL access wrote it) to the decoder:
// it never panics, and what it reads encodes and reads back the same.
func FuzzDecodeStored(f *testing.F) {
	for _, s := range []string{
		`{"fun": "test.ping", "arg": [], "tgt": "*", "tgt_type": "glob", "jid": "20261201020304123456", "user": "root"}`,
		`{"cmd": "_return", "id": "m1", "return": {"a": [1, 2.5, null, true]}, "retcode": 0, "success": true, "_stamp": "2026-12-01T02:03:04.123456"}`,
		`{"return": "caf\u00e9 \ud83d\ude00 \u0000"}`,
		`[1, 2, 3]`, `{"a": NaN}`, `{"a": 1e400}`, `{"a": 123456789012345678901234567890}`, `{`, `"x"`, `{"a": {"b": {"c": {}}}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		m, err := decodeMap(text)
		if err != nil {
			return
		}
		again, err := encode(m)
		if err != nil {
			t.Fatalf("re-encode %q: %v", text, err)
		}
		back, err := decodeMap(again)
		if err != nil {
			t.Fatalf("decode of our own encoding %q: %v", again, err)
		}
		if !ordered.Equal(m, back) {
			t.Fatalf("round trip changed %q into %q", text, again)
		}
	})
}

// FuzzSpoolSegment opens a spool whose segment holds anything (a torn
// write, a damaged disk): it never panics and keeps only whole records.
func FuzzSpoolSegment(f *testing.F) {
	dir := f.TempDir()
	sp, err := openSpool(dir, 0)
	if err != nil {
		f.Fatal(err)
	}
	if err := sp.append(&record{kind: kindReturn, jid: "j", id: "m1", fun: "test.ping", ret: "true", full: "{}", size: 80},
		&record{kind: kindLoad, jid: "j", ret: "{}", size: 70}); err != nil {
		f.Fatal(err)
	}
	sp.close()
	seg, _ := filepath.Glob(filepath.Join(dir, "0", "seg-*.log"))
	good, _ := os.ReadFile(seg[0])
	f.Add(good)
	f.Add(good[:len(good)-3])
	f.Add([]byte{0, 0, 0, 4, 1, 2, 3, 4, 0x90, 0x90})
	f.Fuzz(func(t *testing.T, data []byte) {
		root := t.TempDir()
		d := filepath.Join(root, "0")
		os.MkdirAll(d, 0o700)
		os.WriteFile(filepath.Join(d, "seg-00000000000000000001.log"), data, 0o600)
		sp, err := openSpool(root, 0)
		if err != nil {
			return
		}
		defer sp.close()
		var last uint64
		for _, r := range sp.recs {
			if r.seq <= last || (r.kind != kindLoad && r.kind != kindReturn && r.kind != kindEvent) {
				t.Fatalf("record out of order or of no kind: %+v", r)
			}
			last = r.seq
		}
		if sp.next <= last {
			t.Fatalf("next sequence %d not past %d", sp.next, last)
		}
	})
}
