package sqlcache

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/brinesalt/brine/internal/jid"
	"github.com/brinesalt/brine/internal/protocol"
)

// ErrSpoolFull is a write refused because the spool holds its limit of
// records the database has not taken yet.
var ErrSpoolFull = errors.New("job cache spool full")

// The kinds of spooled records.
const (
	kindLoad   = "load"
	kindReturn = "ret"
	kindEvent  = "event"
)

// record is one write for the database, encoded as it will be stored:
// a load (jid, load JSON), a return (jid, id, fun, success, return
// JSON, full_ret JSON) or an event (tag, data JSON). at is when it
// arrived (Unix µs), stored as alter_time.
type record struct {
	seq    uint64
	kind   string
	at     int64
	jid    string
	id     string // minion id; the tag of an event
	fun    string
	succ   bool
	ret    string // return JSON; the load or event data JSON
	full   string // full_ret JSON
	size   int
	sealed bool // written to disk
}

func (r *record) fields() []any {
	return []any{int64(r.seq), r.kind, r.at, r.jid, r.id, r.fun, r.succ, r.ret, r.full}
}

func recordFrom(v any) (*record, error) {
	l, ok := v.([]any)
	if !ok || len(l) != 9 {
		return nil, fmt.Errorf("spool record: %w", protocol.ErrBadLoad)
	}
	seq, _ := protocol.AsInt(l[0])
	at, _ := l[2].(int64)
	if i, ok := l[2].(int); ok {
		at = int64(i)
	}
	r := &record{seq: uint64(seq), at: at}
	var oks [6]bool
	r.kind, oks[0] = l[1].(string)
	r.jid, oks[1] = l[3].(string)
	r.id, oks[2] = l[4].(string)
	r.fun, oks[3] = l[5].(string)
	r.succ, oks[4] = l[6].(bool)
	r.ret, oks[5] = l[7].(string)
	r.full, _ = l[8].(string)
	for _, ok := range oks {
		if !ok {
			return nil, fmt.Errorf("spool record %d: %w", seq, protocol.ErrBadLoad)
		}
	}
	if (r.kind != kindLoad && r.kind != kindReturn && r.kind != kindEvent) || seq <= 0 {
		return nil, fmt.Errorf("spool record %d of kind %q: %w", seq, r.kind, protocol.ErrBadLoad)
	}
	r.size = len(r.jid) + len(r.id) + len(r.fun) + len(r.ret) + len(r.full) + 64
	return r, nil
}

// segmentBytes is when the spool starts a new segment file.
const segmentBytes = 8 << 20

// spool is the database stores' durable queue: every write is appended
// to a segment file in the spool directory (framed, checksummed, no
// fsync, as Salt writes its file cache) and kept in memory until the
// database has it. Records carry increasing sequence numbers; the
// database records the last one it took in the same transaction as
// the rows (table brine_spool), so a restart replays exactly what it
// had not taken, in order, once. The directory is locked (flock) by
// the one process that uses it.
type spool struct {
	dir  string
	id   string
	lock *os.File
	max  int64

	mu      sync.Mutex
	recs    []*record // pending, in sequence order
	bytes   int64
	next    uint64
	seg     *os.File
	segW    *bufio.Writer
	segSize int64
	segs    []segment // closed and current segments, oldest first
	notify  chan struct{}
}

type segment struct {
	path string
	last uint64 // highest sequence number in it
}

// openSpool takes the first spool directory under root that no other
// process holds (root/0, root/1, …), reads back what it holds, and
// opens a new segment for appends.
func openSpool(root string, max int64) (*spool, error) {
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, fmt.Errorf("open spool: %w", err)
	}
	for n := 0; n < 64; n++ {
		dir := filepath.Join(root, strconv.Itoa(n))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("open spool: %w", err)
		}
		lf, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, fmt.Errorf("open spool: %w", err)
		}
		if err := tryLock(lf); err != nil {
			lf.Close()
			continue
		}
		s := &spool{dir: dir, lock: lf, max: max, next: 1, notify: make(chan struct{}, 1)}
		if err := s.load(); err != nil {
			lf.Close()
			return nil, err
		}
		return s, nil
	}
	return nil, fmt.Errorf("open spool %s: every spool directory is in use", root)
}

// load reads the spool's id and segments.
func (s *spool) load() error {
	idPath := filepath.Join(s.dir, "id")
	b, err := os.ReadFile(idPath)
	if err != nil {
		s.id = jid.RandomHex(16)
		if err := os.WriteFile(idPath, []byte(s.id), 0o600); err != nil {
			return fmt.Errorf("open spool: %w", err)
		}
	} else {
		s.id = strings.TrimSpace(string(b))
	}
	names, _ := filepath.Glob(filepath.Join(s.dir, "seg-*.log"))
	sort.Slice(names, func(i, j int) bool { return segNum(names[i]) < segNum(names[j]) })
	for _, name := range names {
		// A segment is named after the sequence number it starts at, so
		// even an empty one says where numbering goes on.
		s.next = max(s.next, segNum(name))
		last, err := s.readSegment(name)
		if err != nil {
			return err
		}
		if last == 0 {
			os.Remove(name)
			continue
		}
		s.segs = append(s.segs, segment{path: name, last: last})
	}
	return s.roll()
}

func segNum(path string) uint64 {
	n, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(path), "seg-"), ".log"), 10, 64)
	return n
}

// readSegment loads a segment's records. A torn or damaged tail (a
// crash mid-write) ends the segment: what follows it is not trusted.
func (s *spool) readSegment(path string) (uint64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("open spool: %w", err)
	}
	defer f.Close()
	r := bufio.NewReader(f)
	var last uint64
	for {
		var hdr [8]byte
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return last, nil
		}
		n := binary.BigEndian.Uint32(hdr[:4])
		if n > 1<<30 {
			return last, nil
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(r, body); err != nil || crc32.ChecksumIEEE(body) != binary.BigEndian.Uint32(hdr[4:]) {
			return last, nil
		}
		v, err := protocol.Unmarshal(body)
		if err != nil {
			return last, nil
		}
		rec, err := recordFrom(v)
		if err != nil || (len(s.recs) > 0 && rec.seq <= s.recs[len(s.recs)-1].seq) {
			return last, nil
		}
		rec.sealed = true
		s.recs = append(s.recs, rec)
		s.bytes += int64(rec.size)
		last = rec.seq
		if rec.seq >= s.next {
			s.next = rec.seq + 1
		}
	}
}

// roll starts a new segment file named after the next sequence number.
func (s *spool) roll() error {
	if s.segW != nil {
		if err := s.segW.Flush(); err != nil {
			return fmt.Errorf("spool: %w", err)
		}
		s.seg.Close()
	}
	path := filepath.Join(s.dir, fmt.Sprintf("seg-%020d.log", s.next))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	s.seg, s.segW, s.segSize = f, bufio.NewWriterSize(f, 64<<10), 0
	s.segs = append(s.segs, segment{path: path})
	return nil
}

// append adds records to the spool, on disk before it returns; all of
// them or, when the spool is full, none (ErrSpoolFull).
func (s *spool) append(recs ...*record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var add int64
	for _, r := range recs {
		add += int64(r.size)
	}
	if s.max > 0 && s.bytes+add > s.max {
		return fmt.Errorf("%w (%d bytes waiting for the database)", ErrSpoolFull, s.bytes)
	}
	for _, r := range recs {
		r.seq = s.next
		body, err := protocol.Marshal(r.fields())
		if err != nil {
			return fmt.Errorf("spool: %w", err)
		}
		var hdr [8]byte
		binary.BigEndian.PutUint32(hdr[:4], uint32(len(body)))
		binary.BigEndian.PutUint32(hdr[4:], crc32.ChecksumIEEE(body))
		s.segW.Write(hdr[:])
		s.segW.Write(body)
		s.segSize += int64(len(body) + 8)
		s.next++
		s.segs[len(s.segs)-1].last = r.seq
	}
	// One write per call: the records reach the file (the page cache)
	// before the caller is told they are kept.
	if err := s.segW.Flush(); err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	for _, r := range recs {
		r.sealed = true
		s.recs = append(s.recs, r)
		s.bytes += int64(r.size)
	}
	if s.segSize > segmentBytes {
		if err := s.roll(); err != nil {
			return err
		}
	}
	select {
	case s.notify <- struct{}{}:
	default:
	}
	return nil
}

// peek returns the oldest pending records, at most n of them and about
// maxBytes (always at least one).
func (s *spool) peek(n int, maxBytes int) []*record {
	s.mu.Lock()
	defer s.mu.Unlock()
	size := 0
	i := 0
	for i < len(s.recs) && i < n {
		if i > 0 && size+s.recs[i].size > maxBytes {
			break
		}
		size += s.recs[i].size
		i++
	}
	return append([]*record(nil), s.recs[:i]...)
}

// commit drops the records up to seq (the database has them) and the
// segments that hold nothing newer.
func (s *spool) commit(seq uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := 0
	for i < len(s.recs) && s.recs[i].seq <= seq {
		s.bytes -= int64(s.recs[i].size)
		i++
	}
	s.recs = append(s.recs[:0:0], s.recs[i:]...)
	for len(s.segs) > 1 && s.segs[0].last <= seq {
		os.Remove(s.segs[0].path)
		s.segs = s.segs[1:]
	}
}

// pending returns a copy of the records not yet in the database for
// which keep is true.
func (s *spool) pending(keep func(*record) bool) []*record {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*record
	for _, r := range s.recs {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

// stats is the number and size of the pending records.
func (s *spool) stats() (int, int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.recs), s.bytes
}

// close flushes and releases the spool; what is pending stays on disk
// for the next process that takes this directory, and the newest
// segment stays to carry the sequence on.
func (s *spool) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var err error
	if s.segW != nil {
		err = s.segW.Flush()
		s.seg.Close()
		s.segW = nil
	}
	s.lock.Close()
	return err
}
