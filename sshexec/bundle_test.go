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
	path, _, err := b.Payload(runtime.GOARCH, CodecZstd)
	if err != nil {
		t.Fatal(err)
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
