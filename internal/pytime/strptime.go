package pytime

import (
	"fmt"
	"strings"
	"time"
)

// strptimeLayout maps Python's strptime directives onto Go layout
// elements; Go's parser accepts the same single-width and zero-padded
// forms for these.
var strptimeLayout = map[byte]string{
	'Y': "2006", 'y': "06", 'm': "01", 'd': "02", 'H': "15", 'I': "03",
	'M': "04", 'S': "05", 'p': "PM", 'b': "Jan", 'h': "Jan", 'B': "January",
	'a': "Mon", 'A': "Monday", 'j': "002", 'z': "-0700", 'Z': "MST",
}

// Strptime parses value as Python's datetime.strptime(value, format)
// does for the directives Salt's schedule once_fmt uses (%Y %y %m %d %H
// %I %M %S %f %p %b %B %a %A %j %z %Z %%). The result is a naive time in
// the local zone unless the format has %z. A directive outside that set
// is an error naming it.
func Strptime(value, format string) (time.Time, error) {
	var layout strings.Builder
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' {
			layout.WriteByte(c)
			continue
		}
		if i+1 >= len(format) {
			return time.Time{}, fmt.Errorf("strptime %q: stray %% at end of format %q", value, format)
		}
		i++
		switch d := format[i]; {
		case d == '%':
			layout.WriteByte('%')
		case d == 'f':
			layout.WriteString(".000000")
		default:
			el, ok := strptimeLayout[d]
			if !ok {
				return time.Time{}, fmt.Errorf("strptime %q: directive %%%c is not supported", value, d)
			}
			layout.WriteString(el)
		}
	}
	t, err := time.ParseInLocation(layout.String(), value, time.Local)
	if err != nil {
		return time.Time{}, fmt.Errorf("time data %q does not match format %q: %w", value, format, err)
	}
	return t, nil
}
