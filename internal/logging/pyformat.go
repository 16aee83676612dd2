package logging

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/pytime"
)

// Salt's log file formats (salt/_logging/impl.py).
const (
	DefaultFileFormat     = "%(asctime)s,%(msecs)03d [%(name)-17s:%(lineno)-4d][%(levelname)-8s][%(process)d] %(message)s"
	DefaultFileDateFormat = "%Y-%m-%d %H:%M:%S"
)

// pyFormat is a parsed Python logging format string ("%(name)-17s").
type pyFormat struct {
	parts    []pyPart
	needsPC  bool // a field comes from the caller's frame
	datefmt  string
	progName string
}

// pyPart is literal text, or one %(key)spec field rendered with spec as a
// Go fmt verb (Python's printf-style flags, width and precision are C's,
// as Go's are).
type pyPart struct {
	lit  string
	key  string
	spec string // e.g. "-17s", "03d"
}

// callerFields are the LogRecord attributes read from the frame that
// logged.
var callerFields = map[string]bool{"name": true, "lineno": true, "pathname": true, "filename": true,
	"module": true, "funcName": true, "bracketname": true, "colorname": true}

// parsePyFormat reads fmt's %(key)spec fields; "%%" is a percent sign and
// anything else is literal text.
func parsePyFormat(format, datefmt, progName string) *pyFormat {
	f := &pyFormat{datefmt: datefmt, progName: progName}
	var lit strings.Builder
	for i := 0; i < len(format); i++ {
		if format[i] != '%' || i+1 >= len(format) {
			lit.WriteByte(format[i])
			continue
		}
		if format[i+1] == '%' {
			lit.WriteByte('%')
			i++
			continue
		}
		end := strings.IndexByte(format[i:], ')')
		if format[i+1] != '(' || end < 0 {
			lit.WriteByte('%')
			continue
		}
		key := format[i+2 : i+end]
		j := i + end + 1
		for j < len(format) && strings.IndexByte("#0- +.123456789", format[j]) >= 0 {
			j++
		}
		if j >= len(format) || strings.IndexByte("sdifFeEgGxXorc", format[j]) < 0 {
			lit.WriteByte('%')
			continue
		}
		if lit.Len() > 0 {
			f.parts = append(f.parts, pyPart{lit: lit.String()})
			lit.Reset()
		}
		f.parts = append(f.parts, pyPart{key: key, spec: format[i+end+1 : j+1]})
		f.needsPC = f.needsPC || callerFields[key]
		i = j
	}
	if lit.Len() > 0 {
		f.parts = append(f.parts, pyPart{lit: lit.String()})
	}
	return f
}

// render formats one record whose message (attributes included) is msg.
func (f *pyFormat) render(r slog.Record, msg string) string {
	fields := f.fields(r, msg)
	var b strings.Builder
	for _, p := range f.parts {
		if p.key == "" {
			b.WriteString(p.lit)
			continue
		}
		v, ok := fields[p.key]
		if !ok {
			// Python would fail the record; keep the field visible.
			b.WriteString("%(" + p.key + ")" + p.spec)
			continue
		}
		b.WriteString(pyConvert(p.spec, v))
	}
	return b.String()
}

// pyConvert applies one printf-style conversion the way Python's %
// operator does: %d truncates a float, %s prints anything, %r quotes.
func pyConvert(spec string, v any) string {
	verb := spec[len(spec)-1]
	flags := spec[:len(spec)-1]
	switch verb {
	case 'd', 'i', 'x', 'X', 'o', 'c':
		var n int64
		switch x := v.(type) {
		case int:
			n = int64(x)
		case int64:
			n = x
		case float64:
			n = int64(x)
		default:
			return fmt.Sprintf("%"+flags+"s", fmt.Sprint(v))
		}
		if verb == 'i' {
			verb = 'd'
		}
		return fmt.Sprintf("%"+flags+string(verb), n)
	case 'f', 'F', 'e', 'E', 'g', 'G':
		var x float64
		switch n := v.(type) {
		case int:
			x = float64(n)
		case int64:
			x = float64(n)
		case float64:
			x = n
		default:
			return fmt.Sprintf("%"+flags+"s", fmt.Sprint(v))
		}
		if verb == 'F' {
			verb = 'f'
		}
		return fmt.Sprintf("%"+flags+string(verb), x)
	case 'r':
		return fmt.Sprintf("%"+flags+"s", "'"+fmt.Sprint(v)+"'")
	}
	return fmt.Sprintf("%"+flags+"s", fmt.Sprint(v))
}

var start = time.Now()

// fields are the LogRecord attributes Python's logging and Salt's
// SaltLogRecord offer a format.
func (f *pyFormat) fields(r slog.Record, msg string) map[string]any {
	t := r.Time
	if t.IsZero() {
		t = time.Now()
	}
	level := levelName(r.Level)
	m := map[string]any{
		"message": msg, "levelname": level, "levelno": pyLevelNo(r.Level),
		"asctime":    f.asctime(t),
		"created":    float64(t.UnixNano()) / 1e9,
		"msecs":      float64(t.Nanosecond()/1000) / 1000,
		"process":    os.Getpid(),
		"thread":     0,
		"jid":        "",
		"threadName": "MainThread", "processName": "MainProcess",
		"relativeCreated": float64(t.Sub(start).Microseconds()) / 1000,
		"bracketlevel":    fmt.Sprintf("[%-8s]", level),
		"bracketprocess":  fmt.Sprintf("[%5d]", os.Getpid()),
		"colorlevel":      fmt.Sprintf("[%-8s]", level),
		"colorprocess":    fmt.Sprintf("[%5d]", os.Getpid()),
		"colormsg":        msg,
	}
	if f.needsPC {
		f.callerFields(m, r.PC)
	}
	return m
}

// asctime is Formatter.formatTime: the datefmt, or Python's default with
// milliseconds after a comma.
func (f *pyFormat) asctime(t time.Time) string {
	if f.datefmt == "" {
		return pytime.Strftime(t, DefaultFileDateFormat) + fmt.Sprintf(",%03d", t.Nanosecond()/1e6)
	}
	return pytime.Strftime(t, f.datefmt)
}

// callerFields fills the attributes of the frame that logged. Brine's
// logger name is its package path under the module, dotted
// ("brine.sshexec.sshconn"), or the program's name for its main package.
func (f *pyFormat) callerFields(m map[string]any, pc uintptr) {
	name, fn, file, line := f.progName, "", "", 0
	if pc != 0 {
		fr, _ := runtime.CallersFrames([]uintptr{pc}).Next()
		fn, file, line = fr.Function, fr.File, fr.Line
		if pkg := funcPackage(fn); pkg != "main" {
			name = strings.ReplaceAll(strings.TrimPrefix(pkg, "github.com/brinesalt/"), "/", ".")
		}
		fn = fn[strings.LastIndexByte(fn, '.')+1:]
	}
	base := filepath.Base(file)
	m["name"], m["funcName"], m["pathname"], m["filename"], m["lineno"] = name, fn, file, base, line
	m["module"] = strings.TrimSuffix(base, ".go")
	m["bracketname"] = fmt.Sprintf("[%-17s]", name)
	m["colorname"] = m["bracketname"]
}

// funcPackage is the import path of a runtime function name such as
// "github.com/x/y/pkg.(*T).Method".
func funcPackage(fn string) string {
	slash := strings.LastIndexByte(fn, '/')
	dot := strings.IndexByte(fn[slash+1:], '.')
	if dot < 0 {
		return fn
	}
	return fn[:slash+1+dot]
}

// pyLevelNo is Python's number for a level (Salt's TRACE is 5, GARBAGE 1).
func pyLevelNo(l slog.Level) int {
	switch {
	case l >= LevelCritical:
		return 50
	case l >= slog.LevelError:
		return 40
	case l >= slog.LevelWarn:
		return 30
	case l >= slog.LevelInfo:
		return 20
	case l >= slog.LevelDebug:
		return 10
	}
	return 5
}
