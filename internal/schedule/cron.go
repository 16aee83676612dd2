package schedule

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Cron is a parsed cron expression as croniter, which Salt's scheduler
// uses for `cron:` (salt/utils/schedule.py _handle_cron), reads it:
// minute hour day-of-month month day-of-week, with an optional sixth
// field of seconds; `*`, `?`, lists, ranges, steps, month and weekday
// names, 7 for Sunday, and the @hourly style aliases. When both the day
// of month and the day of week are restricted a day matching either
// fires, as in Vixie cron and croniter's default day_or=True.
type Cron struct {
	expr                          string
	sec, min, hour, dom, mon, dow uint64
	domStar, dowStar              bool
}

var cronAliases = map[string]string{
	"@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *",
	"@weekly": "0 0 * * 0", "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *",
}

var monthNames = map[string]int{"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6,
	"jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12}

var dayNames = map[string]int{"sun": 0, "mon": 1, "tue": 2, "wed": 3, "thu": 4, "fri": 5, "sat": 6}

// ParseCron parses a cron expression; the error says which field is
// wrong.
func ParseCron(expr string) (*Cron, error) {
	s := strings.TrimSpace(expr)
	if a, ok := cronAliases[strings.ToLower(s)]; ok {
		s = a
	}
	f := strings.Fields(s)
	if len(f) != 5 && len(f) != 6 {
		return nil, fmt.Errorf("cron %q: exactly 5 or 6 columns has to be specified", expr)
	}
	if len(f) == 5 {
		f = append(f, "0")
	}
	c := &Cron{expr: expr, domStar: isStar(f[2]), dowStar: isStar(f[4])}
	var err error
	for _, x := range []struct {
		dst    *uint64
		field  string
		name   string
		lo, hi int
		names  map[string]int
	}{
		{&c.min, f[0], "minute", 0, 59, nil}, {&c.hour, f[1], "hour", 0, 23, nil},
		{&c.dom, f[2], "day of month", 1, 31, nil}, {&c.mon, f[3], "month", 1, 12, monthNames},
		{&c.dow, f[4], "day of week", 0, 7, dayNames}, {&c.sec, f[5], "second", 0, 59, nil},
	} {
		if *x.dst, err = parseField(x.field, x.lo, x.hi, x.names); err != nil {
			return nil, fmt.Errorf("cron %q: %s field %q: %w", expr, x.name, x.field, err)
		}
	}
	if c.dow&(1<<7) != 0 {
		c.dow |= 1
	}
	return c, nil
}

func isStar(f string) bool { return f == "*" || f == "?" }

// parseField turns one field into a bit set of the values it allows.
func parseField(f string, lo, hi int, names map[string]int) (uint64, error) {
	var set uint64
	for _, part := range strings.Split(f, ",") {
		rng, stepText, hasStep := strings.Cut(part, "/")
		step := 1
		if hasStep {
			n, err := strconv.Atoi(stepText)
			if err != nil || n <= 0 || n > hi+1 {
				return 0, fmt.Errorf("bad step %q", stepText)
			}
			step = n
		}
		a, b := lo, hi
		switch {
		case isStar(rng):
		default:
			from, to, isRange := strings.Cut(rng, "-")
			var err error
			if a, err = fieldValue(from, names); err != nil {
				return 0, err
			}
			b = a
			if isRange {
				if b, err = fieldValue(to, names); err != nil {
					return 0, err
				}
			} else if hasStep {
				b = hi
			}
		}
		if a < lo || b > hi || a > b {
			return 0, fmt.Errorf("%d-%d is outside %d-%d", a, b, lo, hi)
		}
		for v := a; v <= b; v += step {
			set |= 1 << uint(v)
		}
	}
	return set, nil
}

func fieldValue(s string, names map[string]int) (int, error) {
	if n, ok := names[strings.ToLower(s)]; ok {
		return n, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("bad value %q", s)
	}
	return n, nil
}

func (c *Cron) dayMatches(t time.Time) bool {
	dom := c.dom&(1<<uint(t.Day())) != 0
	dow := c.dow&(1<<uint(t.Weekday())) != 0
	switch {
	case c.domStar && c.dowStar:
		return true
	case c.domStar:
		return dow
	case c.dowStar:
		return dom
	}
	return dom || dow
}

// Next is the first time strictly after t that the expression matches
// (croniter.get_next), or the zero time when none comes within five
// years (an expression such as "0 0 31 2 *").
func (c *Cron) Next(t time.Time) time.Time {
	t = t.Truncate(time.Second).Add(time.Second)
	end := t.AddDate(5, 0, 0)
	for t.Before(end) {
		switch {
		case c.mon&(1<<uint(t.Month())) == 0:
			t = time.Date(t.Year(), t.Month()+1, 1, 0, 0, 0, 0, t.Location())
		case !c.dayMatches(t):
			t = time.Date(t.Year(), t.Month(), t.Day()+1, 0, 0, 0, 0, t.Location())
		case c.hour&(1<<uint(t.Hour())) == 0:
			t = time.Date(t.Year(), t.Month(), t.Day(), t.Hour()+1, 0, 0, 0, t.Location())
		case c.min&(1<<uint(t.Minute())) == 0:
			t = time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute()+1, 0, 0, t.Location())
		case c.sec&(1<<uint(t.Second())) == 0:
			t = t.Add(time.Second)
		default:
			return t
		}
	}
	return time.Time{}
}

// String is the expression as written.
func (c *Cron) String() string { return c.expr }
