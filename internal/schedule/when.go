package schedule

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParseDate reads a date and time the way Salt's scheduler reads
// `when`, `range`, `after` and `until` (dateutil.parser.parse), for the
// forms Salt's documentation uses: "2026-12-02 14:00:00", ISO
// "2026-12-02T14:00", "12/02/2026 5:00pm", "Dec 2 2026 17:00",
// "Monday 5:00pm", "5:00pm", "17:30". Missing parts come from today at
// midnight, as dateutil's default; a weekday without a date is its next
// occurrence (today when it is today), as dateutil's relativedelta(weekday=).
func ParseDate(s string, now time.Time) (time.Time, error) {
	p := dateParts{year: now.Year(), month: int(now.Month()), day: now.Day(), wday: -1}
	toks := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return r == ' ' || r == ',' || r == '\t' })
	if len(toks) == 0 {
		return time.Time{}, fmt.Errorf("string does not contain a date: %q", s)
	}
	for i := 0; i < len(toks); i++ {
		next := ""
		if i+1 < len(toks) {
			next = toks[i+1]
		}
		used, err := p.token(toks[i], next)
		if err != nil {
			return time.Time{}, fmt.Errorf("unknown string format: %q: %w", s, err)
		}
		i += used
	}
	return p.time(now)
}

type dateParts struct {
	year, month, day     int
	hour, min, sec, nsec int
	wday                 int
	haveDate, haveTime   bool
	pendingDay           int // a bare number waiting for a month name
}

// token consumes tok (and, for "5:00 pm", the meridiem after it); it
// returns how many extra tokens it used.
func (p *dateParts) token(tok, next string) (int, error) {
	if d, t, ok := strings.Cut(tok, "t"); ok && strings.Count(d, "-") == 2 && t != "" {
		if err := p.isoDate(d); err != nil {
			return 0, err
		}
		return 0, p.clock(t, "")
	}
	switch {
	case strings.Count(tok, "-") == 2:
		return 0, p.isoDate(tok)
	case strings.Count(tok, "/") == 2:
		return 0, p.slashDate(tok)
	case strings.Contains(tok, ":") || strings.HasSuffix(tok, "am") || strings.HasSuffix(tok, "pm"):
		if next == "am" || next == "pm" {
			return 1, p.clock(tok, next)
		}
		return 0, p.clock(tok, "")
	}
	if wd, ok := weekday(tok); ok {
		p.wday = wd
		return 0, nil
	}
	if m, ok := monthNames[prefix3(tok)]; ok && len(tok) >= 3 {
		p.month, p.haveDate = m, true
		if p.pendingDay > 0 {
			p.day, p.pendingDay = p.pendingDay, 0
		}
		return 0, nil
	}
	n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(tok, "st"), "nd"), "rd"), "th"))
	if err != nil {
		return 0, fmt.Errorf("token %q", tok)
	}
	switch {
	case n > 31 || len(tok) == 4:
		p.year, p.haveDate = n, true
	case p.haveDate:
		p.day = n
	default:
		p.pendingDay, p.day, p.haveDate = n, n, true
	}
	if next == "am" || next == "pm" {
		p.day, p.pendingDay = 0, 0
		return 1, p.clock(tok, next)
	}
	return 0, nil
}

func prefix3(s string) string {
	if len(s) > 3 {
		return s[:3]
	}
	return s
}

func weekday(tok string) (int, bool) {
	full := []string{"sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"}
	for i, n := range full {
		if tok == n || tok == n[:3] {
			return i, true
		}
	}
	return 0, false
}

func atoiRange(s string, lo, hi int) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("%q is not in %d-%d", s, lo, hi)
	}
	return n, nil
}

func (p *dateParts) isoDate(s string) error {
	f := strings.Split(s, "-")
	var err error
	if p.year, err = atoiRange(f[0], 1, 9999); err != nil {
		return err
	}
	if p.month, err = atoiRange(f[1], 1, 12); err != nil {
		return err
	}
	p.day, err = atoiRange(f[2], 1, 31)
	p.haveDate = true
	return err
}

func (p *dateParts) slashDate(s string) error {
	f := strings.Split(s, "/")
	var err error
	if p.month, err = atoiRange(f[0], 1, 12); err != nil {
		return err
	}
	if p.day, err = atoiRange(f[1], 1, 31); err != nil {
		return err
	}
	if p.year, err = atoiRange(f[2], 0, 9999); err != nil {
		return err
	}
	if len(f[2]) <= 2 {
		p.year += 2000
	}
	p.haveDate = true
	return nil
}

// clock reads "17:30", "5:00:01.5", "5pm", "5:00pm" or "5:00" + "pm".
func (p *dateParts) clock(s, meridiem string) error {
	for _, m := range []string{"am", "pm"} {
		if strings.HasSuffix(s, m) {
			s, meridiem = strings.TrimSuffix(s, m), m
		}
	}
	s = strings.TrimSuffix(strings.TrimSuffix(s, "z"), "+00:00")
	f := strings.Split(s, ":")
	if len(f) > 3 || f[0] == "" {
		return fmt.Errorf("time %q", s)
	}
	var err error
	hi := 23
	if meridiem != "" {
		hi = 12
	}
	if p.hour, err = atoiRange(f[0], 0, hi); err != nil {
		return err
	}
	if len(f) > 1 {
		if p.min, err = atoiRange(f[1], 0, 59); err != nil {
			return err
		}
	}
	if len(f) > 2 {
		sec, frac, _ := strings.Cut(f[2], ".")
		if p.sec, err = atoiRange(sec, 0, 59); err != nil {
			return err
		}
		if frac != "" {
			fv, ferr := strconv.ParseFloat("0."+frac, 64)
			if ferr != nil {
				return fmt.Errorf("fraction %q", frac)
			}
			p.nsec = int(fv * 1e9)
		}
	}
	switch {
	case meridiem == "pm" && p.hour < 12:
		p.hour += 12
	case meridiem == "am" && p.hour == 12:
		p.hour = 0
	}
	p.haveTime = true
	return nil
}

func (p *dateParts) time(now time.Time) (time.Time, error) {
	if !p.haveDate && !p.haveTime && p.wday < 0 {
		return time.Time{}, fmt.Errorf("string does not contain a date")
	}
	if p.day < 1 || p.day > 31 {
		return time.Time{}, fmt.Errorf("day %d is out of range", p.day)
	}
	t := time.Date(p.year, time.Month(p.month), p.day, p.hour, p.min, p.sec, p.nsec, now.Location())
	if t.Day() != p.day {
		return time.Time{}, fmt.Errorf("day is out of range for month")
	}
	if p.wday >= 0 {
		t = t.AddDate(0, 0, (p.wday-int(t.Weekday())+7)%7)
	}
	return t, nil
}
