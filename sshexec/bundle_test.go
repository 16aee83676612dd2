package sshexec

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// TestZstdPayloadWindow: the zstd copy decodes to the binary and declares
// the small window that keeps a hundred concurrent unpacks in cache.
func TestZstdPayloadWindow(t *testing.T) {
	b, err := OpenBundle(buildThin(t), filepath.Join(t.TempDir(), "cache"))
	if err != nil {
		t.Fatal(err)
	}
	path, check, err := b.Payload(runtime.GOARCH, CodecZstd)
	if err != nil {
		t.Fatal(err)
	}
	// The host keeps a zstd upload until install has checked it, so the
	// sha256 it checks is the upload's (as Salt checks thin.tgz).
	if sum, err := fileSum(path); err != nil || check != sum {
		t.Errorf("zstd payload checked against %s, want the upload's sha256 %s (%v)", check, sum, err)
	}
	if _, gz, err := b.Payload(runtime.GOARCH, CodecGzip); err != nil || gz != b.sums[runtime.GOARCH] {
		t.Errorf("gzip payload checked against %s, want the binary's %s (%v)", gz, b.sums[runtime.GOARCH], err)
	}
	if filepath.Ext(path) != "."+string(CodecZstd)+compressedVersion {
		t.Errorf("cached copy %s does not name its settings", path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var h zstd.Header
	if err := h.Decode(data); err != nil {
		t.Fatal(err)
	}
	if h.WindowSize == 0 || h.WindowSize > zstdWindow || !h.HasCheckSum {
		t.Errorf("frame window %d (want at most %d), checksum %v", h.WindowSize, zstdWindow, h.HasCheckSum)
	}
	dec, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	got, err := dec.DecodeAll(data, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(b.binaries[runtime.GOARCH])
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("zstd copy does not decode to the binary")
	}
}

// TestPrebuiltZstd: a .zst beside the binary is sent when it decodes to
// the binary with a small window; a stale or large-window one is not.
func TestPrebuiltZstd(t *testing.T) {
	src := buildThin(t)
	bin, err := os.ReadFile(filepath.Join(src, "salt-thin-linux-"+runtime.GOARCH))
	if err != nil {
		t.Fatal(err)
	}
	encode := func(data []byte, window int) []byte {
		enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderCRC(true), zstd.WithWindowSize(window))
		if err != nil {
			t.Fatal(err)
		}
		return enc.EncodeAll(data, nil)
	}
	stale := append([]byte("x"), bin[1:]...)
	for _, tt := range []struct {
		name    string
		file    []byte
		adopted bool
	}{
		{"matching", encode(bin, zstdWindow), true},
		{"stale", encode(stale, zstdWindow), false},
		{"large window", encode(bin, 8<<20), false},
		{"damaged", encode(bin, zstdWindow)[:1000], false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "salt-thin-linux-"+runtime.GOARCH)
			if err := os.WriteFile(p, bin, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p+prebuiltExt, tt.file, 0o644); err != nil {
				t.Fatal(err)
			}
			b, err := OpenBundle(dir, filepath.Join(dir, "cache"))
			if err != nil {
				t.Fatal(err)
			}
			path, _, err := b.Payload(runtime.GOARCH, CodecZstd)
			if err != nil {
				t.Fatal(err)
			}
			sent, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := bytes.Equal(sent, tt.file); got != tt.adopted {
				t.Errorf("prebuilt sent: %v, want %v", got, tt.adopted)
			}
			dec, _ := zstd.NewReader(nil)
			defer dec.Close()
			if out, err := dec.DecodeAll(sent, nil); err != nil || !bytes.Equal(out, bin) {
				t.Errorf("payload does not decode to the binary: %v", err)
			}
		})
	}
}
