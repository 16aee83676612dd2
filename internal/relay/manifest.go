package relay

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
)

// DefaultChunkSize is the chunk size the controller uses: large enough
// that a chunk's round trip is small beside its transfer, small enough
// that a 20 MiB release spreads over twenty chunks.
const DefaultChunkSize = 1 << 20

// MaxChunkSize bounds the chunk size an agent accepts in a header, so a
// bad header cannot make it allocate without limit.
const MaxChunkSize = 16 << 20

// File is one file's manifest: its whole sha256 and size, and the sha256
// of each of its chunks in order (every chunk ChunkSize bytes but the last).
type File struct {
	Sum    string   `json:"sum"`
	Size   int64    `json:"size"`
	Chunks []string `json:"chunks"`
}

// ChunkLen is the length of chunk i of f.
func (f File) ChunkLen(i, chunkSize int) int64 {
	if rest := f.Size - int64(i)*int64(chunkSize); rest < int64(chunkSize) {
		return rest
	}
	return int64(chunkSize)
}

// Split reads the file at path and returns its manifest.
func Split(path string, chunkSize int) (File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return File{}, fmt.Errorf("split %s: %w", path, err)
	}
	defer fh.Close()
	whole := sha256.New()
	buf := make([]byte, chunkSize)
	var f File
	for {
		n, err := io.ReadFull(fh, buf)
		if n > 0 {
			sum := sha256.Sum256(buf[:n])
			f.Chunks = append(f.Chunks, hex.EncodeToString(sum[:]))
			whole.Write(buf[:n])
			f.Size += int64(n)
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			return File{}, fmt.Errorf("split %s: %w", path, err)
		}
	}
	f.Sum = hex.EncodeToString(whole.Sum(nil))
	return f, nil
}

// validHash reports whether s is a lowercase hex sha256, the only names
// the store gives files.
func validHash(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// check reports what is wrong with f as a manifest made with chunkSize.
func (f File) check(chunkSize int) error {
	if !validHash(f.Sum) {
		return fmt.Errorf("file sum %q is not a sha256", f.Sum)
	}
	want := (f.Size + int64(chunkSize) - 1) / int64(chunkSize)
	if f.Size < 0 || int64(len(f.Chunks)) != want {
		return fmt.Errorf("file %s: %d chunks for %d bytes", f.Sum, len(f.Chunks), f.Size)
	}
	for _, c := range f.Chunks {
		if !validHash(c) {
			return fmt.Errorf("file %s: chunk %q is not a sha256", f.Sum, c)
		}
	}
	return nil
}
