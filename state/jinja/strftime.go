package jinja

import (
	"crypto/sha1"
	"fmt"
	"strconv"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/pytime"
)

// fStrftime is Salt's strftime filter (salt/utils/dateutils.py): the value
// is a Unix timestamp (number or digit string) or, as timelib would
// parse it, a date string; the default format is "%Y-%m-%d".
func fStrftime(r *runner, v any, args []any, kw *ordered.Map) (any, error) {
	format, _ := arg(args, kw, 0, "format", "%Y-%m-%d").(string)
	t, err := dateCast(v)
	if err != nil {
		return nil, err
	}
	return pytime.Strftime(t, format), nil
}

var dateLayouts = []string{
	time.RFC3339, "2006-01-02 15:04:05", "2006-01-02T15:04:05", "2006-01-02 15:04", "2006-01-02",
	"2006/01/02 15:04:05", "2006/01/02", time.RFC1123Z, time.RFC1123, time.ANSIC,
}

func dateCast(v any) (time.Time, error) {
	switch x := v.(type) {
	case nil:
		return time.Now(), nil
	case int:
		return time.Unix(int64(x), 0), nil
	case float64:
		sec := int64(x)
		return time.Unix(sec, int64((x-float64(sec))*1e9)), nil
	case string:
		if f, err := strconv.ParseFloat(x, 64); err == nil {
			sec := int64(f)
			return time.Unix(sec, int64((f-float64(sec))*1e9)), nil
		}
		for _, l := range dateLayouts {
			if t, err := time.ParseInLocation(l, x, time.Local); err == nil {
				return t, nil
			}
		}
		return time.Time{}, runtimeErr("Unable to parse %s", x)
	}
	return time.Time{}, runtimeErr("Unable to parse %s", pyStr(v))
}

// fUUID is Salt's uuid filter: a version-5 UUID of the value's string in
// Salt's GLOBAL_UUID namespace.
func fUUID(r *runner, v any, _ []any, _ *ordered.Map) (any, error) {
	s, err := r.toStr(v)
	if err != nil {
		return nil, err
	}
	ns := []byte{0x91, 0x63, 0x3e, 0xbf, 0x1c, 0x86, 0x5e, 0x33, 0x93, 0x5a, 0x28, 0x06, 0x1f, 0x4b, 0x48, 0x0e}
	h := sha1.New()
	h.Write(ns)
	h.Write([]byte(s))
	u := h.Sum(nil)[:16]
	u[6] = u[6]&0x0f | 0x50
	u[8] = u[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16]), nil
}
