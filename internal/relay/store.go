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

// partSuffix names a file still arriving: .chunks/<sha256>.part holds its
// chunks at their offsets, each written only once it matched its hash.
const partSuffix = ".part"

// Store is a host's content cache (<thin_dir>/files): whole files named by
// their sha256, and files still arriving under .chunks/<sha256>.part (a
// chunk of no expected file under .chunks/<sha256>). Nothing is ever
// named by its hash before it matched.
//
// A chunk is written once, into its place in its file's part file, so a
// file costs one write of its bytes and one read to check the whole hash
// (chunk files and then a copy into the file cost two writes and a read).
type Store struct {
	dir    string
	chunks string
	mode   os.FileMode

	mu    sync.Mutex
	have  map[string]bool       // verified chunks held as chunk files
	in    map[string]located    // verified chunks inside whole or part files
	where map[string][]place    // the part-file places each chunk goes
	parts map[string]*partState // file sum → its part file
}

// partState is one file still arriving.
type partState struct {
	path    string
	written map[int]bool // chunk indexes written and verified
}

type located struct {
	file string
	off  int64
	n    int64
}

// place is where a chunk goes in a part file: chunk idx of that file.
type place struct {
	located
	part *partState
	idx  int
}

// OpenStore opens (creating it) the store in dir, whose files get mode.
// It removes temporary files left by a killed agent and keeps every chunk
// file that still hashes to its name, deleting the rest.
func OpenStore(dir string, mode os.FileMode) (*Store, error) {
	s := &Store{dir: dir, chunks: filepath.Join(dir, ".chunks"), mode: mode, have: map[string]bool{}, in: map[string]located{},
		where: map[string][]place{}, parts: map[string]*partState{}}
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
			case d == s.chunks && strings.HasSuffix(name, partSuffix) && validHash(strings.TrimSuffix(name, partSuffix)):
				// Checked chunk by chunk by Expect, which knows the manifest.
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
	return s.putVerified(chunk, data)
}

// Expect prepares for f: its part file, where every chunk of f that
// arrives is written in place. Chunks a killed run left there count as
// held when they still hash to their names.
func (s *Store) Expect(f File, chunkSize int) error {
	s.mu.Lock()
	_, ok := s.parts[f.Sum]
	s.mu.Unlock()
	if ok || s.HasFile(f.Sum) {
		return nil
	}
	p := &partState{path: filepath.Join(s.chunks, f.Sum+partSuffix), written: map[int]bool{}}
	fh, err := os.OpenFile(p.path, os.O_RDWR|os.O_CREATE, s.mode)
	if err != nil {
		return fmt.Errorf("expect %s: %w", f.Sum, err)
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return fmt.Errorf("expect %s: %w", f.Sum, err)
	}
	held := st.Size()
	if st.Size() != f.Size {
		if err := fh.Truncate(f.Size); err != nil {
			return fmt.Errorf("expect %s: %w", f.Sum, err)
		}
	}
	buf := make([]byte, chunkSize)
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, c := range f.Chunks {
		l := located{file: p.path, off: int64(i) * int64(chunkSize), n: f.ChunkLen(i, chunkSize)}
		s.where[c] = append(s.where[c], place{located: l, part: p, idx: i})
		if l.off+l.n > held {
			continue
		}
		if _, err := fh.ReadAt(buf[:l.n], l.off); err == nil && hashOf(buf[:l.n]) == c {
			p.written[i] = true
			if _, ok := s.in[c]; !ok {
				s.in[c] = l
			}
		}
	}
	s.parts[f.Sum] = p
	return nil
}

// putVerified keeps data the caller has just hashed to chunk (Fetch
// does): hashing it a second time would only cost the CPU. It goes to
// its places in the part files, or to a chunk file when no expected
// file has it.
func (s *Store) putVerified(chunk string, data []byte) error {
	if s.Has(chunk) {
		return nil
	}
	s.mu.Lock()
	places := s.where[chunk]
	s.mu.Unlock()
	if len(places) > 0 {
		return s.putInPlace(chunk, data, places)
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
	return s.ReadInto(chunk, nil)
}

// ReadInto is Read into buf's spare capacity when it is large enough.
func (s *Store) ReadInto(chunk string, buf []byte) ([]byte, error) {
	b, err := s.readRaw(chunk, buf)
	if err != nil {
		return nil, err
	}
	if hashOf(b) != chunk {
		return nil, fmt.Errorf("stored chunk %s: %w", chunk, ErrCorrupt)
	}
	return b, nil
}

// readRaw returns the bytes held for chunk, unchecked. A part file
// renamed into place while it was being opened is looked up again.
func (s *Store) readRaw(chunk string, buf []byte) ([]byte, error) {
	b, err := s.readRawOnce(chunk, buf)
	if errors.Is(err, os.ErrNotExist) {
		b, err = s.readRawOnce(chunk, buf)
	}
	return b, err
}

func (s *Store) readRawOnce(chunk string, buf []byte) ([]byte, error) {
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
		b, err = readAtInto(loc, buf)
	default:
		return nil, fmt.Errorf("chunk %s: %w", chunk, os.ErrNotExist)
	}
	return b, err
}

// putInPlace writes a verified chunk at its places in the part files.
// Not synced: a chunk cut short by a crash fails its hash when the part
// is next expected, and is fetched again then.
func (s *Store) putInPlace(chunk string, data []byte, places []place) error {
	for _, l := range places {
		fh, err := os.OpenFile(l.file, os.O_WRONLY, 0)
		if err != nil {
			return fmt.Errorf("write chunk %s: %w", chunk, err)
		}
		_, err = fh.WriteAt(data, l.off)
		if cerr := fh.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("write chunk %s: %w", chunk, err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, pl := range places {
		pl.part.written[pl.idx] = true
	}
	s.in[chunk] = places[0].located
	return nil
}

func readAt(l located) ([]byte, error) { return readAtInto(l, nil) }

// readAtInto reads l into buf's spare capacity when it fits.
func readAtInto(l located, buf []byte) ([]byte, error) {
	f, err := os.Open(l.file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var b []byte
	if int64(cap(buf)-len(buf)) >= l.n {
		b = buf[len(buf) : len(buf)+int(l.n)]
	} else {
		b = make([]byte, l.n)
	}
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
// are then removed: the chunks are served from the whole file. The
// chunks are not hashed one by one again: the whole hash covers every
// byte of them.
func (s *Store) Assemble(f File, chunkSize int) error {
	s.mu.Lock()
	p := s.parts[f.Sum]
	s.mu.Unlock()
	if p != nil {
		return s.assemblePart(f, chunkSize, p)
	}
	final := filepath.Join(s.dir, f.Sum)
	err := s.writeAtomic(final, true, func(w io.Writer) error {
		h := sha256.New()
		for _, c := range f.Chunks {
			b, err := s.readRaw(c, nil)
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
	s.servedFrom(final, f, chunkSize)
	return nil
}

// assemblePart completes f's part file with any chunk held elsewhere
// (in another file), checks the whole hash, syncs it and renames it to
// <dir>/<sum>; the chunks in it are served from there on.
func (s *Store) assemblePart(f File, chunkSize int, p *partState) error {
	final := filepath.Join(s.dir, f.Sum)
	fh, err := os.OpenFile(p.path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("assemble %s: %w", f.Sum, err)
	}
	defer fh.Close()
	for i, c := range f.Chunks {
		s.mu.Lock()
		done := p.written[i]
		s.mu.Unlock()
		if done {
			continue
		}
		b, err := s.readRaw(c, nil)
		if err == nil {
			_, err = fh.WriteAt(b, int64(i)*int64(chunkSize))
		}
		if err != nil {
			return fmt.Errorf("assemble %s: %w", f.Sum, err)
		}
	}
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(fh, 0, f.Size)); err != nil {
		return fmt.Errorf("assemble %s: %w", f.Sum, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != f.Sum {
		// A chunk damaged on disk since it was verified: start over.
		s.forgetPart(f, p)
		os.Remove(p.path)
		return fmt.Errorf("file %s: %w (got %s)", f.Sum, ErrCorrupt, got)
	}
	if err := fh.Sync(); err != nil {
		return fmt.Errorf("assemble %s: %w", f.Sum, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := os.Rename(p.path, final); err != nil {
		return fmt.Errorf("assemble %s: %w", f.Sum, err)
	}
	s.forgetPartLocked(f, p)
	s.servedFrom(final, f, chunkSize)
	return nil
}

// servedFrom serves f's chunks from the whole file final, removing the
// chunk files they no longer need; s.mu is held.
func (s *Store) servedFrom(final string, f File, chunkSize int) {
	for i, c := range f.Chunks {
		s.in[c] = located{file: final, off: int64(i) * int64(chunkSize), n: f.ChunkLen(i, chunkSize)}
		if s.have[c] {
			delete(s.have, c)
			os.Remove(filepath.Join(s.chunks, c))
		}
	}
}

// forgetPart drops p's places and the chunks held only in it.
func (s *Store) forgetPart(f File, p *partState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forgetPartLocked(f, p)
}

func (s *Store) forgetPartLocked(f File, p *partState) {
	delete(s.parts, f.Sum)
	for _, c := range f.Chunks {
		kept := s.where[c][:0]
		for _, pl := range s.where[c] {
			if pl.part != p {
				kept = append(kept, pl)
			}
		}
		if len(kept) == 0 {
			delete(s.where, c)
		} else {
			s.where[c] = kept
		}
		if s.in[c].file == p.path {
			delete(s.in, c)
		}
	}
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
