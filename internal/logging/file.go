package logging

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// FileOptions say where and how a program writes its log file, as Salt's
// setup_logfile_handler takes them (salt/_logging/impl.py).
type FileOptions struct {
	// Path is the log file; its directory is created when missing.
	Path string
	// Level is a Salt level name (log_level_logfile).
	Level string
	// Format and DateFormat are log_fmt_logfile and log_datefmt_logfile,
	// Python logging formats; empty means Salt's defaults.
	Format, DateFormat string
	// Name is the logger name records from a main package get.
	Name string
}

// ErrSyslog is returned by OpenFile for Salt's syslog destinations
// (file:///dev/log, udp://host:port, tcp://host:port), which Brine does
// not write to.
var ErrSyslog = errors.New("syslog log destinations are not supported")

// FileHandler writes records to a log file in Salt's file format.
type FileHandler struct {
	w     *os.File
	level slog.Level
	fmt   *pyFormat
	mu    *sync.Mutex
	attrs []slog.Attr
	group string
}

// OpenFile opens (appending) or creates o.Path, and its directory, as
// Salt's verify_log_files does: the file 0640 and the directory 0750
// (umask 027).
func OpenFile(o FileOptions) (*FileHandler, error) {
	for _, scheme := range []string{"file://", "udp://", "tcp://"} {
		if strings.HasPrefix(o.Path, scheme) {
			return nil, fmt.Errorf("open log file %s: %w", o.Path, ErrSyslog)
		}
	}
	level, err := ParseLevel(o.Level)
	if err != nil {
		return nil, fmt.Errorf("log file level: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(o.Path), 0o750); err != nil {
		return nil, fmt.Errorf("open log file: %w", err)
	}
	f, err := os.OpenFile(o.Path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
	if err != nil {
		return nil, fmt.Errorf("open log file: %w", err)
	}
	format := o.Format
	if format == "" {
		format = DefaultFileFormat
	}
	datefmt := o.DateFormat
	if datefmt == "" {
		datefmt = DefaultFileDateFormat
	}
	return &FileHandler{w: f, level: level, fmt: parsePyFormat(format, datefmt, o.Name), mu: &sync.Mutex{}}, nil
}

// Close closes the file.
func (h *FileHandler) Close() error { return h.w.Close() }

// Enabled implements slog.Handler.
func (h *FileHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }

// Handle implements slog.Handler: one line per record, its attributes
// after the message as on the console.
func (h *FileHandler) Handle(_ context.Context, r slog.Record) error {
	line := h.fmt.render(r, message(r, h.attrs, h.group)) + "\n"
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, line)
	return err
}

// WithAttrs implements slog.Handler.
func (h *FileHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append(append([]slog.Attr(nil), h.attrs...), attrs...)
	return &c
}

// WithGroup implements slog.Handler.
func (h *FileHandler) WithGroup(name string) slog.Handler {
	c := *h
	if c.group != "" {
		name = c.group + "." + name
	}
	c.group = name
	return &c
}

// Tee sends each record to every handler that is enabled for its level,
// as Python's root logger hands a record to its console and file
// handlers, each with its own level.
func Tee(hs ...slog.Handler) slog.Handler { return tee(hs) }

type tee []slog.Handler

func (t tee) Enabled(ctx context.Context, l slog.Level) bool {
	for _, h := range t {
		if h.Enabled(ctx, l) {
			return true
		}
	}
	return false
}

func (t tee) Handle(ctx context.Context, r slog.Record) error {
	var errs []error
	for _, h := range t {
		if h.Enabled(ctx, r.Level) {
			errs = append(errs, h.Handle(ctx, r.Clone()))
		}
	}
	return errors.Join(errs...)
}

func (t tee) WithAttrs(attrs []slog.Attr) slog.Handler {
	out := make(tee, len(t))
	for i, h := range t {
		out[i] = h.WithAttrs(attrs)
	}
	return out
}

func (t tee) WithGroup(name string) slog.Handler {
	out := make(tee, len(t))
	for i, h := range t {
		out[i] = h.WithGroup(name)
	}
	return out
}

// Recorder keeps records in memory until they can be replayed into a
// handler opened later, as Salt's temporary logging handler holds the
// records logged while the configuration that names the log file is
// read.
type Recorder struct {
	mu      *sync.Mutex
	records *[]slog.Record
	attrs   []slog.Attr
}

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder { return &Recorder{mu: &sync.Mutex{}, records: new([]slog.Record)} }

// Enabled implements slog.Handler; every level is kept.
func (r *Recorder) Enabled(context.Context, slog.Level) bool { return true }

// Handle implements slog.Handler.
func (r *Recorder) Handle(_ context.Context, rec slog.Record) error {
	rec = rec.Clone()
	rec.AddAttrs(r.attrs...)
	r.mu.Lock()
	defer r.mu.Unlock()
	*r.records = append(*r.records, rec)
	return nil
}

// WithAttrs implements slog.Handler.
func (r *Recorder) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *r
	c.attrs = append(append([]slog.Attr(nil), r.attrs...), attrs...)
	return &c
}

// WithGroup implements slog.Handler; groups are flattened.
func (r *Recorder) WithGroup(string) slog.Handler { return r }

// Replay hands the kept records that h is enabled for to h, in order.
func (r *Recorder) Replay(ctx context.Context, h slog.Handler) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rec := range *r.records {
		if h.Enabled(ctx, rec.Level) {
			_ = h.Handle(ctx, rec)
		}
	}
	*r.records = nil
}
