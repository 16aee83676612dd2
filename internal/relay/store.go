package relay

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// ErrCorrupt means bytes did not hash to the chunk or file they were
// meant to be.
var ErrCorrupt = errors.New("checksum mismatch")

// tmpPrefix names the store's temporary files; Open removes any a killed
// agent left, so no partial file outlives a run.
const tmpPrefix = ".relay-"

// Store is a host's content cache (<thin_dir>/files): whole files named by
// their sha256, and verified chunks of files still arriving under
// .chunks/<sha256>. Nothing is ever named by its hash before it matched.
type Store struct {
	dir    string
	chunks string
	mode   os.FileMode

	mu   sync.Mutex
	have map[string]bool    // verified chunks held as chunk files
	in   map[string]located // verified chunks inside whole files
}

type located struct {
	file string
	off  int64
	n    int64
}

// OpenStore opens (creating it) the store in dir, whose files get mode.
// It removes temporary files left by a killed agent and keeps every chunk
// file that still hashes to its name, deleting the rest.
func OpenStore(dir string, mode os.FileMode) (*Store, error) {
	s := &Store{dir: dir, chunks: filepath.Join(dir, ".chunks"), mode: mode, have: map[string]bool{}, in: map[string]located{}}
	if err := os.MkdirAll(s.chunks, 0o700); err != nil {
		return nil, fmt.Errorf("open relay store: %w", err)
	}
	for _, d := range []string{dir, s.chunks} {
		ents, err := os.ReadDir(d)
		if err != nil {
			return nil, fmt.Errorf("open relay store: %w", err)
		}
		for _, e := range ents {
			name := e.Name()
			switch {
			case strings.HasPrefix(name, tmpPrefix):
				os.Remove(filepath.Join(d, name))
			case d == s.chunks:
				if b, err := os.ReadFile(filepath.Join(d, name)); err == nil && validHash(name) && hashOf(b) == name {
					s.have[name] = true
				} else {
					os.Remove(filepath.Join(d, name))
				}
			}
		}
	}
	return s, nil
}

func hashOf(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Has reports whether the store holds a verified copy of chunk.
func (s *Store) Has(chunk string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, in := s.in[chunk]
	return s.have[chunk] || in
}

// HasFile reports whether the whole file sum is in place.
func (s *Store) HasFile(sum string) bool {
	_, err := os.Stat(filepath.Join(s.dir, sum))
	return err == nil
}

// Put verifies data against chunk and keeps it; ErrCorrupt when it does
// not match.
func (s *Store) Put(chunk string, data []byte) error {
	if hashOf(data) != chunk {
		return fmt.Errorf("chunk %s: %w", chunk, ErrCorrupt)
	}
	if s.Has(chunk) {
		return nil
	}
	// Not synced: a chunk cut short by a crash fails its hash when the
	// store is next opened, and is dropped then.
	if err := s.writeAtomic(filepath.Join(s.chunks, chunk), false, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}); err != nil {
		return err
	}
	s.mu.Lock()
	s.have[chunk] = true
	s.mu.Unlock()
	return nil
}

// Read returns the verified bytes of chunk, hashing them again as read:
// a chunk damaged on disk since it arrived is never served.
func (s *Store) Read(chunk string) ([]byte, error) {
	s.mu.Lock()
	loc, in := s.in[chunk]
	have := s.have[chunk]
	s.mu.Unlock()
	var b []byte
	var err error
	switch {
	case have:
		b, err = os.ReadFile(filepath.Join(s.chunks, chunk))
	case in:
		b, err = readAt(loc)
	default:
		return nil, fmt.Errorf("chunk %s: %w", chunk, os.ErrNotExist)
	}
	if err != nil {
		return nil, err
	}
	if hashOf(b) != chunk {
		return nil, fmt.Errorf("stored chunk %s: %w", chunk, ErrCorrupt)
	}
	return b, nil
}

func readAt(l located) ([]byte, error) {
	f, err := os.Open(l.file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, l.n)
	_, err = f.ReadAt(b, l.off)
	return b, err
}

// Complete reports whether every chunk of f is held.
func (s *Store) Complete(f File) bool {
	for _, c := range f.Chunks {
		if !s.Has(c) {
			return false
		}
	}
	return true
}

// Assemble writes f from its chunks under a temporary name, checks the
// whole hash, and only then renames it to <dir>/<sum>. Its chunk files
// are then removed: the chunks are served from the whole file.
func (s *Store) Assemble(f File, chunkSize int) error {
	final := filepath.Join(s.dir, f.Sum)
	err := s.writeAtomic(final, true, func(w io.Writer) error {
		h := sha256.New()
		for _, c := range f.Chunks {
			b, err := s.Read(c)
			if err != nil {
				return err
			}
			h.Write(b)
			if _, err := w.Write(b); err != nil {
				return err
			}
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != f.Sum {
			return fmt.Errorf("file %s: %w (got %s)", f.Sum, ErrCorrupt, got)
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, c := range f.Chunks {
		s.in[c] = located{file: final, off: int64(i) * int64(chunkSize), n: f.ChunkLen(i, chunkSize)}
		if s.have[c] {
			delete(s.have, c)
			os.Remove(filepath.Join(s.chunks, c))
		}
	}
	return nil
}

// writeAtomic writes path through a temporary file in the same
// directory, renamed when complete (and synced first when sync is set),
// so path either does not exist or holds everything.
func (s *Store) writeAtomic(path string, sync bool, fill func(io.Writer) error) error {
	var rnd [8]byte
	rand.Read(rnd[:])
	tmp := filepath.Join(filepath.Dir(path), tmpPrefix+hex.EncodeToString(rnd[:]))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, s.mode)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	err = fill(f)
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// Adopt checks a whole file already in place chunk by chunk and, when
// every chunk matches, serves its chunks from it.
func (s *Store) Adopt(f File, chunkSize int) error {
	final := filepath.Join(s.dir, f.Sum)
	for i, c := range f.Chunks {
		b, err := readAt(located{file: final, off: int64(i) * int64(chunkSize), n: f.ChunkLen(i, chunkSize)})
		if err != nil {
			return err
		}
		if hashOf(b) != c {
			return fmt.Errorf("file %s chunk %d: %w", f.Sum, i, ErrCorrupt)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, c := range f.Chunks {
		s.in[c] = located{file: final, off: int64(i) * int64(chunkSize), n: f.ChunkLen(i, chunkSize)}
	}
	return nil
}

// Place copies the whole file sum of the store in dir to dest, through a
// temporary file beside dest that is hashed as it is written, synced,
// and renamed over dest only when the hash matches: dest is either what
// it was or the whole file. Missing parent directories are created.
func Place(dir, sum, dest string, mode os.FileMode) error {
	if !validHash(sum) {
		return fmt.Errorf("place %s: %q is not a sha256", dest, sum)
	}
	src, err := os.Open(filepath.Join(dir, sum))
	if err != nil {
		return fmt.Errorf("place %s: %w", dest, err)
	}
	defer src.Close()
	if err := os.MkdirAll(filepath.Dir(dest), 0o777); err != nil {
		return fmt.Errorf("place %s: %w", dest, err)
	}
	s := &Store{mode: mode}
	err = s.writeAtomic(dest, true, func(w io.Writer) error {
		h := sha256.New()
		if _, err := io.Copy(io.MultiWriter(w, h), src); err != nil {
			return err
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != sum {
			return fmt.Errorf("file %s: %w (got %s)", sum, ErrCorrupt, got)
		}
		if f, ok := w.(*os.File); ok {
			// The umask must not narrow the mode asked for.
			return f.Chmod(mode)
		}
		return nil
	})
	return err
}

// Discard removes the whole file sum from the store in dir, once it is
// placed and no run serves it any more.
func Discard(dir, sum string) error {
	if !validHash(sum) {
		return fmt.Errorf("discard %q: not a sha256", sum)
	}
	err := os.Remove(filepath.Join(dir, sum))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}
