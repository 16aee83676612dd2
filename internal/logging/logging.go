// Package logging maps Salt's -l/--log-level names onto log/slog and
// prints records the way Salt's console handler does: "[WARNING ] msg".
package logging

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
)

// Levels beyond slog's four, for Salt's trace/garbage and quiet.
const (
	LevelTrace    = slog.Level(-8)
	LevelCritical = slog.Level(12)
	LevelQuiet    = slog.Level(1000)
)

// ParseLevel maps a Salt level name to a slog level.
func ParseLevel(name string) (slog.Level, error) {
	switch strings.ToLower(name) {
	case "all", "garbage", "trace":
		return LevelTrace, nil
	case "debug":
		return slog.LevelDebug, nil
	case "profile", "info":
		return slog.LevelInfo, nil
	case "warning", "warn", "":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	case "critical":
		return LevelCritical, nil
	case "quiet":
		return LevelQuiet, nil
	}
	return 0, fmt.Errorf("unknown log level %q (all, garbage, trace, debug, profile, info, warning, error, critical, quiet)", name)
}

// New returns a logger writing Salt-style lines to w at the named level.
func New(w io.Writer, level string) (*slog.Logger, error) {
	l, err := ParseLevel(level)
	if err != nil {
		return nil, err
	}
	return slog.New(&handler{w: w, level: l, mu: &sync.Mutex{}}), nil
}

type handler struct {
	w     io.Writer
	level slog.Level
	mu    *sync.Mutex
	attrs []slog.Attr
	group string
}

func (h *handler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }

func levelName(l slog.Level) string {
	switch {
	case l >= LevelCritical:
		return "CRITICAL"
	case l >= slog.LevelError:
		return "ERROR"
	case l >= slog.LevelWarn:
		return "WARNING"
	case l >= slog.LevelInfo:
		return "INFO"
	case l >= slog.LevelDebug:
		return "DEBUG"
	}
	return "TRACE"
}

func (h *handler) Handle(_ context.Context, r slog.Record) error {
	line := fmt.Sprintf("[%-8s] %s\n", levelName(r.Level), message(r, h.attrs, h.group))
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, line)
	return err
}

// message is the record's message followed by " key=value" for the
// handler's attributes and the record's own.
func message(r slog.Record, attrs []slog.Attr, group string) string {
	var b strings.Builder
	b.WriteString(r.Message)
	write := func(a slog.Attr) {
		if group != "" {
			a.Key = group + "." + a.Key
		}
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value.Resolve())
	}
	for _, a := range attrs {
		write(a)
	}
	r.Attrs(func(a slog.Attr) bool { write(a); return true })
	return b.String()
}

func (h *handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append(append([]slog.Attr(nil), h.attrs...), attrs...)
	return &c
}

func (h *handler) WithGroup(name string) slog.Handler {
	c := *h
	if c.group != "" {
		name = c.group + "." + name
	}
	c.group = name
	return &c
}
