package schedule

import (
	"strings"
	"testing"
	"time"
)

func TestCronNext(t *testing.T) {
	base := time.Date(2026, 12, 2, 12, 34, 56, 0, time.UTC) // a Wednesday
	for _, tc := range []struct{ expr, want string }{
		{"* * * * *", "2026-12-02 12:35:00"},
		{"*/15 * * * *", "2026-12-02 12:45:00"},
		{"0 9 * * mon-fri", "2026-12-03 09:00:00"},
		{"30 2 1 * *", "2027-01-01 02:30:00"},
		{"0 0 * * 7", "2026-12-06 00:00:00"},
		{"0 0 1 jan *", "2027-01-01 00:00:00"},
		{"@hourly", "2026-12-02 13:00:00"},
		{"0 0 13 * fri", "2026-12-04 00:00:00"}, // day_or: Friday the 4th comes before the 13th
		{"5,10 12 * * *", "2026-12-03 12:05:00"},
		{"* * * * * */20", "2026-12-02 12:35:00"},
		{"10-20/5 * * * *", "2026-12-02 13:10:00"},
	} {
		c, err := ParseCron(tc.expr)
		if err != nil {
			t.Fatalf("%s: %v", tc.expr, err)
		}
		if got := c.Next(base).Format(time.DateTime); got != tc.want {
			t.Errorf("%s: next %s, want %s", tc.expr, got, tc.want)
		}
	}
	if c, _ := ParseCron("0 0 31 2 *"); !c.Next(base).IsZero() {
		t.Error("Feb 31 should never match")
	}
}

func TestCronBad(t *testing.T) {
	for _, expr := range []string{"", "* * * *", "61 * * * *", "* 24 * * *", "* * 0 * *", "*/0 * * * *", "a * * * *", "5-1 * * * *", "* * * * * * *"} {
		if _, err := ParseCron(expr); err == nil || !strings.Contains(err.Error(), "cron") {
			t.Errorf("%q: %v, want an error", expr, err)
		}
	}
}

func FuzzParseCron(f *testing.F) {
	for _, s := range []string{"* * * * *", "*/5 1-3 1,15 jan-mar mon", "@daily", "0 0 31 2 *", "1-2/0 * * * *"} {
		f.Add(s)
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCron(s)
		if err != nil {
			return
		}
		if n := c.Next(base); !n.IsZero() && !n.After(base) {
			t.Fatalf("%q: next %v is not after %v", s, n, base)
		}
	})
}

func TestParseDate(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC) // Wednesday
	for _, tc := range []struct{ in, want string }{
		{"2026-12-25 14:00:00", "2026-12-25 14:00:00"},
		{"2026-12-25T14:05", "2026-12-25 14:05:00"},
		{"12/25/2026 5:00pm", "2026-12-25 17:00:00"},
		{"Dec 25 2026 17:00", "2026-12-25 17:00:00"},
		{"25 December 2026", "2026-12-25 00:00:00"},
		{"Monday 5:00pm", "2026-12-07 17:00:00"},
		{"wednesday 9am", "2026-12-02 09:00:00"},
		{"5:00 PM", "2026-12-02 17:00:00"},
		{"17:30", "2026-12-02 17:30:00"},
		{"12am", "2026-12-02 00:00:00"},
	} {
		got, err := ParseDate(tc.in, now)
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if s := got.Format(time.DateTime); s != tc.want {
			t.Errorf("%q: %s, want %s", tc.in, s, tc.want)
		}
	}
	for _, bad := range []string{"", "tomorrowish", "25:00", "2026-02-30", "13pm"} {
		if _, err := ParseDate(bad, now); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func FuzzParseDate(f *testing.F) {
	for _, s := range []string{"2026-12-25 14:00:00", "Monday 5:00pm", "12/25/26", "Dec 25 2026", "5 pm"} {
		f.Add(s)
	}
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) { _, _ = ParseDate(s, now) })
}
