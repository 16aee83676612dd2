package beacons

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/internal/schedule"
)

// utmpSize is struct.calcsize("hi32s4s32s256shhiii4i20x"), glibc's
// struct utmp on Linux.
const utmpSize = 384

// utmpFields are the names Salt's btmp and wtmp beacons give the first
// ten unpacked values. Salt's list is one short of the struct's fields
// after exit_status (a pair of shorts), so "session" holds e_exit,
// "time" ut_session and "addr" the seconds of ut_tv; Brine keeps those
// names on those values (salt/beacons/btmp.py FIELDS).
var utmpFields = []string{"type", "PID", "line", "inittab", "user", "hostname", "exit_status", "session", "time", "addr"}

// parseUtmp unpacks one record as struct.unpack(FMT) and Salt's loop
// over FIELDS do: strings decoded and stripped of NULs.
func parseUtmp(rec []byte) (*ordered.Map, error) {
	if len(rec) != utmpSize {
		return nil, fmt.Errorf("utmp record of %d bytes, want %d", len(rec), utmpSize)
	}
	le := binary.NativeEndian
	str := func(b []byte) string { return strings.Trim(strings.ToValidUTF8(string(b), "\uFFFD"), "\x00") }
	vals := []any{
		int(int16(le.Uint16(rec[0:2]))), int(int32(le.Uint32(rec[4:8]))),
		str(rec[8:40]), str(rec[40:44]), str(rec[44:76]), str(rec[76:332]),
		int(int16(le.Uint16(rec[332:334]))), int(int16(le.Uint16(rec[334:336]))),
		int(int32(le.Uint32(rec[336:340]))), int(int32(le.Uint32(rec[340:344]))),
	}
	m := ordered.New()
	for i, f := range utmpFields {
		m.Set(f, vals[i])
	}
	return m, nil
}

func init() {
	Register("btmp", func() Beacon { return &utmpBeacon{name: "btmp", file: "/var/log/btmp"} })
	Register("wtmp", func() Beacon {
		return &utmpBeacon{name: "wtmp", file: "/var/log/wtmp", wtmp: true, ttys: map[string]string{}}
	})
	Register("log", func() Beacon { return &logBeacon{} })
}

// utmpBeacon is salt/beacons/btmp.py and wtmp.py: records appended to
// the file since the last pass (the first pass only notes the end), for
// the configured users and groups within their time_range; wtmp adds
// action login/logout and the logout's user from the login on that tty.
type utmpBeacon struct {
	name, file string
	wtmp       bool
	loc        int64
	ttys       map[string]string
}

func (*utmpBeacon) Close() {}

func (b *utmpBeacon) Validate(config any) string {
	list, ok := isList(config)
	if !ok {
		return fmt.Sprintf("Configuration for %s beacon must be a list.", b.name)
	}
	c := ListToDict(list)
	for _, k := range []string{"users", "groups"} {
		v, ok := c.Get(k)
		if !ok {
			continue
		}
		m, isMap := v.(*ordered.Map)
		if !isMap {
			return fmt.Sprintf("%s configuration for %s beacon must be a dictionary.", map[string]string{"users": "User", "groups": "Group"}[k], b.name)
		}
		msg := ""
		m.Range(func(_, e any) bool {
			em, _ := e.(*ordered.Map)
			msg = b.validRange(em.Value("time_range"))
			return msg == ""
		})
		if msg != "" {
			return msg
		}
	}
	if v, ok := c.Get("defaults"); ok {
		m, isMap := v.(*ordered.Map)
		if !isMap {
			return fmt.Sprintf("Defaults configuration for %s beacon must be a dictionary.", b.name)
		}
		return b.validRange(m.Value("time_range"))
	}
	return ""
}

func (b *utmpBeacon) validRange(v any) string {
	if !py.Truthy(v) {
		return ""
	}
	m, ok := v.(*ordered.Map)
	if !ok {
		return fmt.Sprintf("The time_range parameter for %s beacon must be a dictionary.", b.name)
	}
	if !m.Has("start") || !m.Has("end") {
		return fmt.Sprintf("The time_range parameter for %s beacon must contain start & end options.", b.name)
	}
	return ""
}

func inRange(tr any, now time.Time) bool {
	m, _ := tr.(*ordered.Map)
	start, err1 := schedule.ParseDate(fmt.Sprint(m.Value("start")), now)
	end, err2 := schedule.ParseDate(fmt.Sprint(m.Value("end")), now)
	return err1 == nil && err2 == nil && !now.Before(start) && !now.After(end)
}

func (b *utmpBeacon) Beacon(ctx context.Context, env *Env, config []any) ([]*ordered.Map, error) {
	c := ListToDict(config)
	users, _ := c.Value("users").(*ordered.Map)
	groups, _ := c.Value("groups").(*ordered.Map)
	defaults, _ := c.Value("defaults").(*ordered.Map)
	f, err := os.Open(b.file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if b.loc == 0 {
		b.loc, err = f.Seek(0, io.SeekEnd)
		return nil, err
	}
	if _, err := f.Seek(b.loc, io.SeekStart); err != nil {
		return nil, err
	}
	users = b.withGroups(ctx, env, users, groups)
	var out []*ordered.Map
	rec := make([]byte, utmpSize)
	for {
		if _, err := io.ReadFull(f, rec); err != nil {
			return out, nil
		}
		b.loc += utmpSize
		ev, _ := parseUtmp(rec)
		if b.wtmp {
			b.action(ev)
		}
		if b.wanted(ev, users, defaults) {
			out = append(out, ev)
		}
	}
}

// action is wtmp's login (type 7) and logout (type 8). Salt's ut_type
// option is never applied (wtmp.py compares the item to a string), so
// Brine does not apply it either.
func (b *utmpBeacon) action(ev *ordered.Map) {
	line, _ := ev.Value("line").(string)
	switch ev.Value("type") {
	case 7:
		ev.Set("action", "login")
		b.ttys[line], _ = ev.Value("user").(string)
	case 8:
		ev.Set("action", "logout")
		if u, ok := b.ttys[line]; ok {
			ev.Set("user", u)
			delete(b.ttys, line)
		}
	}
}

// withGroups is _gather_group_members: group members added as users
// with the group's settings (users of their own kept).
func (b *utmpBeacon) withGroups(ctx context.Context, env *Env, users, groups *ordered.Map) *ordered.Map {
	if groups.Len() == 0 {
		return users
	}
	out := ordered.New()
	if users != nil {
		out = users.Copy()
	}
	for _, g := range groups.StringKeys() {
		if env.Call == nil {
			continue
		}
		info, err := env.Call(ctx, "group.info", g)
		im, _ := info.(*ordered.Map)
		if err != nil || im.Len() == 0 {
			continue
		}
		members, _ := im.Value("members").([]any)
		for _, mem := range members {
			if !out.Has(mem) {
				out.Set(mem, groups.Value(g))
			}
		}
	}
	return out
}

func (b *utmpBeacon) wanted(ev *ordered.Map, users, defaults *ordered.Map) bool {
	now := time.Now()
	defRange := defaults.Value("time_range")
	if users.Len() > 0 {
		u, ok := users.Get(ev.Value("user"))
		if !ok {
			return false
		}
		if um, isMap := u.(*ordered.Map); isMap && um.Has("time_range") {
			return inRange(um.Value("time_range"), now)
		}
	}
	if defRange != nil {
		return inRange(defRange, now)
	}
	return true
}

// logBeacon is salt/beacons/log_beacon.py: the lines appended since the
// last pass matched (re.match, from the line's start) against each
// tag's regex.
type logBeacon struct{ loc int64 }

func (*logBeacon) Close() {}

func (*logBeacon) Validate(config any) string {
	list, ok := isList(config)
	if !ok {
		return "Configuration for log beacon must be a list."
	}
	if !ListToDict(list).Has("file") {
		return "Configuration for log beacon must contain file option."
	}
	return ""
}

func logEvent(tag string) *ordered.Map {
	return ordered.FromPairs("tag", tag, "match", "no", "raw", "", "error", "")
}

func (b *logBeacon) Beacon(_ context.Context, _ *Env, config []any) ([]*ordered.Map, error) {
	c := ListToDict(config)
	path, ok := c.Value("file").(string)
	if !ok {
		ev := logEvent("global")
		ev.Set("error", "file not defined in config")
		return []*ordered.Map{ev}, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	end, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, err
	}
	if b.loc == 0 {
		b.loc = end
		return nil, nil
	}
	start := b.loc
	b.loc = end
	if end < start {
		return nil, nil
	}
	txt := make([]byte, end-start)
	if _, err := f.ReadAt(txt, start); err != nil && err != io.EOF {
		return nil, err
	}
	var out []*ordered.Map
	tags, _ := c.Value("tags").(*ordered.Map)
	type tagRE struct {
		tag string
		re  *regexp.Regexp
	}
	var res []tagRE
	for _, tag := range tags.StringKeys() {
		tm, _ := tags.Value(tag).(*ordered.Map)
		pat, _ := tm.Value("regex").(string)
		if pat == "" {
			continue
		}
		re, err := regexp.Compile("^(?:" + pat + ")")
		if err != nil {
			ev := logEvent(tag)
			ev.Set("error", "bad regex")
			out = append(out, ev)
			continue
		}
		res = append(res, tagRE{tag, re})
	}
	for _, line := range splitLines(string(txt)) {
		for _, r := range res {
			if r.re.MatchString(line) {
				ev := logEvent(r.tag)
				ev.Set("raw", line)
				ev.Set("match", "yes")
				out = append(out, ev)
			}
		}
	}
	return out, nil
}

// splitLines is str.splitlines for \n and \r\n text.
func splitLines(s string) []string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}
