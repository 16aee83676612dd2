package beacons

import (
	"encoding/binary"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
)

// The inotify event bits (linux/inotify.h), named as pyinotify names
// them; Salt's masks are these names lowercased without IN_.
var inotifyMasks = map[string]uint32{
	"access": 0x1, "modify": 0x2, "attrib": 0x4, "close_write": 0x8, "close_nowrite": 0x10,
	"open": 0x20, "moved_from": 0x40, "moved_to": 0x80, "create": 0x100, "delete": 0x200,
	"delete_self": 0x400, "move_self": 0x800, "unmount": 0x2000, "q_overflow": 0x4000,
	"ignored": 0x8000, "onlydir": 0x1000000, "dont_follow": 0x2000000, "excl_unlink": 0x4000000,
	"mask_add": 0x20000000, "isdir": 0x40000000, "oneshot": 0x80000000,
	"close": 0x18, "move": 0xc0,
}

const (
	inCreate     = 0x100
	inIgnored    = 0x8000
	inIsDir      = 0x40000000
	inQOverflow  = 0x4000
	defaultMask  = 0x100 | 0x200 | 0x2 // pyinotify IN_CREATE | IN_DELETE | IN_MODIFY
	inotifyEvent = 16                  // sizeof(struct inotify_event) without the name
)

// validInotifyMasks are the masks Salt's validate accepts.
var validInotifyMasks = []string{"access", "attrib", "close_nowrite", "close_write", "create", "delete",
	"delete_self", "excl_unlink", "ignored", "modify", "moved_from", "moved_to", "move_self", "oneshot",
	"onlydir", "open", "unmount"}

// maskName is pyinotify's EventsCodes.maskname: the one event bit's
// IN_ name, with |IN_ISDIR when set.
func maskName(mask uint32) string {
	suffix := ""
	if mask&inIsDir != 0 {
		mask &^= inIsDir
		suffix = "|IN_ISDIR"
	}
	var names []string
	for n, v := range inotifyMasks {
		if v == mask && n != "close" && n != "move" {
			names = append(names, "IN_"+strings.ToUpper(n))
		}
	}
	if len(names) == 0 {
		// Several bits: pyinotify would fail; name them all.
		for n, v := range inotifyMasks {
			if v&(v-1) == 0 && mask&v != 0 {
				names = append(names, "IN_"+strings.ToUpper(n))
			}
		}
		sort.Strings(names)
	}
	return strings.Join(names, "|") + suffix
}

// rawEvent is one struct inotify_event.
type rawEvent struct {
	wd     int32
	mask   uint32
	cookie uint32
	name   string
}

// errShortEvent is a buffer that ends inside an event.
var errShortEvent = errors.New("inotify: truncated event")

// parseEvents splits what read(2) returned from an inotify descriptor
// into events (struct inotify_event: wd, mask, cookie, len, name padded
// with NULs to len).
func parseEvents(buf []byte) ([]rawEvent, error) {
	var out []rawEvent
	for len(buf) > 0 {
		if len(buf) < inotifyEvent {
			return out, errShortEvent
		}
		n := binary.NativeEndian.Uint32(buf[12:16])
		if uint64(len(buf)-inotifyEvent) < uint64(n) {
			return out, errShortEvent
		}
		name := strings.TrimRight(string(buf[inotifyEvent:inotifyEvent+int(n)]), "\x00")
		out = append(out, rawEvent{wd: int32(binary.NativeEndian.Uint32(buf[0:4])), mask: binary.NativeEndian.Uint32(buf[4:8]),
			cookie: binary.NativeEndian.Uint32(buf[8:12]), name: name})
		buf = buf[inotifyEvent+int(n):]
	}
	return out, nil
}

// watchSpec is one `files:` entry.
type watchSpec struct {
	path     string
	mask     uint32
	recurse  bool
	autoAdd  bool
	excludes []any
}

func inotifySpecs(files *ordered.Map) []watchSpec {
	var out []watchSpec
	files.Range(func(k, v any) bool {
		s := watchSpec{path: ordered.KeyString(k), mask: defaultMask}
		if m, ok := v.(*ordered.Map); ok {
			if masks, ok := m.Value("mask").([]any); ok {
				s.mask = 0
				for _, x := range masks {
					s.mask |= inotifyMasks[fmt.Sprint(x)]
				}
			}
			s.recurse = py.Truthy(m.Value("recurse"))
			s.autoAdd = py.Truthy(m.Value("auto_add"))
			s.excludes, _ = m.Value("exclude").([]any)
		}
		out = append(out, s)
		return true
	})
	return out
}

// validateInotify is salt/beacons/inotify.py validate.
func validateInotify(config any) string {
	list, ok := isList(config)
	if !ok {
		return "Configuration for inotify beacon must be a list."
	}
	c := ListToDict(list)
	files, ok := c.Value("files").(*ordered.Map)
	if !c.Has("files") {
		return "Configuration for inotify beacon must include files."
	}
	if !ok {
		return "Configuration for inotify beacon invalid, files must be a dict."
	}
	msg := ""
	files.Range(func(_, v any) bool {
		msg = validateWatch(v)
		return msg == ""
	})
	return msg
}

func validateWatch(v any) string {
	m, ok := v.(*ordered.Map)
	if !ok {
		return "Configuration for inotify beacon must be a list of dictionaries."
	}
	if !m.Has("mask") && !m.Has("recurse") && !m.Has("auto_add") {
		return "Configuration for inotify beacon must contain mask, recurse or auto_add items."
	}
	for _, k := range []string{"auto_add", "recurse"} {
		if x, ok := m.Get(k); ok {
			if _, isBool := x.(bool); !isBool {
				return fmt.Sprintf("Configuration for inotify beacon %s must be boolean.", k)
			}
		}
	}
	if x, ok := m.Get("mask"); ok {
		masks, isList := x.([]any)
		if !isList {
			return "Configuration for inotify beacon mask must be list."
		}
		for _, mk := range masks {
			if !contains(validInotifyMasks, fmt.Sprint(mk)) {
				return fmt.Sprintf("Configuration for inotify beacon invalid mask option %v.", mk)
			}
		}
	}
	return ""
}

// excluded is the beacon's exclude check: a {pattern: {regex: True}}
// item is a regular expression searched in the path, a string with *
// an fnmatch pattern, any other string a path prefix.
func excluded(pathname string, excludes []any) bool {
	for _, e := range excludes {
		switch x := e.(type) {
		case *ordered.Map:
			for _, k := range x.StringKeys() {
				opt, _ := x.Value(k).(*ordered.Map)
				if !py.Truthy(opt.Value("regex")) {
					// Salt's beacon falls through without testing a
					// non-regex dict entry (salt/beacons/inotify.py).
					continue
				}
				if re, err := regexp.Compile(k); err == nil && re.MatchString(pathname) {
					return true
				}
			}
		case string:
			if strings.Contains(x, "*") {
				if ok, _ := path.Match(x, pathname); ok {
					return true
				}
			} else if strings.HasPrefix(pathname, x) {
				return true
			}
		}
	}
	return false
}

// owner finds the `files:` entry an event's watch path belongs to: the
// path itself or its nearest configured parent.
func owner(p string, specs []watchSpec) *watchSpec {
	for {
		for i := range specs {
			if specs[i].path == p {
				return &specs[i]
			}
		}
		if p == "/" || p == "." || p == "" {
			return nil
		}
		p = filepath.Dir(p)
	}
}
