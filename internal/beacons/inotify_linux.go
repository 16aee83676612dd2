package beacons

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
	"golang.org/x/sys/unix"
)

func init() { Register("inotify", func() Beacon { return &inotifyBeacon{fd: -1} }) }

// inotifyBeacon is salt/beacons/inotify.py on the kernel's inotify
// without pyinotify: one non-blocking descriptor per beacon, read once
// per pass; watches are (re)added each pass for configured paths that
// exist, so a file replaced by an editor is watched again.
type inotifyBeacon struct {
	fd    int
	wds   map[int32]*watch
	paths map[string]int32
	buf   []byte
}

type watch struct {
	path string
	mask uint32
	spec watchSpec
}

func (b *inotifyBeacon) Validate(config any) string { return validateInotify(config) }

func (b *inotifyBeacon) Close() {
	if b.fd >= 0 {
		unix.Close(b.fd)
	}
	b.fd, b.wds, b.paths = -1, nil, nil
}

func (b *inotifyBeacon) open() error {
	if b.fd >= 0 {
		return nil
	}
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return fmt.Errorf("inotify_init1: %w", err)
	}
	b.fd, b.wds, b.paths, b.buf = fd, map[int32]*watch{}, map[string]int32{}, make([]byte, 64*1024)
	return nil
}

func (b *inotifyBeacon) Beacon(_ context.Context, _ *Env, config []any) ([]*ordered.Map, error) {
	c := ListToDict(removeHidden(config, "_beacon_name"))
	files, _ := c.Value("files").(*ordered.Map)
	specs := inotifySpecs(files)
	if err := b.open(); err != nil {
		return nil, err
	}
	out, err := b.drain(specs, py.Truthy(c.Value("coalesce")))
	if err != nil {
		return out, err
	}
	for _, s := range specs {
		b.ensure(s)
	}
	return out, nil
}

// drain reads every queued event. With coalesce only the first of
// identical events (wd, mask, cookie, name) in the pass is kept, as
// pyinotify's coalesce_events does within a batch.
func (b *inotifyBeacon) drain(specs []watchSpec, coalesce bool) ([]*ordered.Map, error) {
	var out []*ordered.Map
	seen := map[rawEvent]bool{}
	for {
		n, err := unix.Read(b.fd, b.buf)
		if errors.Is(err, unix.EAGAIN) || n == 0 {
			return out, nil
		}
		if err != nil {
			return out, fmt.Errorf("read inotify events: %w", err)
		}
		evs, err := parseEvents(b.buf[:n])
		if err != nil {
			return out, err
		}
		for _, ev := range evs {
			if coalesce {
				if seen[ev] {
					continue
				}
				seen[ev] = true
			}
			if m := b.event(ev, specs); m != nil {
				out = append(out, m)
			}
		}
	}
}

// event turns one kernel event into the beacon's {"tag": watch path,
// "path": path of the file, "change": IN_ name}, or nil when excluded
// or not for a known watch.
func (b *inotifyBeacon) event(ev rawEvent, specs []watchSpec) *ordered.Map {
	w := b.wds[ev.wd]
	if w == nil {
		return nil
	}
	pathname := w.path
	if ev.name != "" {
		pathname = filepath.Join(w.path, ev.name)
	}
	if ev.mask&inIgnored != 0 {
		delete(b.wds, ev.wd)
		if b.paths[w.path] == ev.wd {
			delete(b.paths, w.path)
		}
	}
	if w.spec.autoAdd && ev.mask&(inCreate|inIsDir) == inCreate|inIsDir {
		b.add(pathname, w.spec)
	}
	if sp := owner(w.path, specs); sp != nil && excluded(pathname, sp.excludes) {
		return nil
	}
	return ordered.FromPairs("tag", w.path, "path", pathname, "change", maskName(ev.mask))
}

// ensure watches a configured path (and with recurse its directories).
func (b *inotifyBeacon) ensure(s watchSpec) {
	if _, err := os.Stat(s.path); err != nil {
		return
	}
	if !s.recurse {
		b.add(s.path, s)
		return
	}
	_ = filepath.WalkDir(s.path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if p == s.path || (d.IsDir() && !excluded(p, s.excludes)) {
			b.add(p, s)
		}
		return nil
	})
}

func (b *inotifyBeacon) add(p string, s watchSpec) {
	mask := s.mask
	if s.autoAdd {
		mask |= inCreate
	}
	if wd, ok := b.paths[p]; ok && b.wds[wd] != nil && b.wds[wd].mask == mask {
		return
	}
	wd, err := unix.InotifyAddWatch(b.fd, p, mask)
	if err != nil {
		return
	}
	b.paths[p] = int32(wd)
	b.wds[int32(wd)] = &watch{path: p, mask: mask, spec: s}
}
