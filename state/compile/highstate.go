package compile

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"

	"github.com/brinesalt/brine/internal/ordered"
)

// Source is the file server as the state compiler sees it.
type Source interface {
	// Envs lists the saltenvs, "base" first.
	Envs() []string
	// ListStates lists the SLS names available in saltenv (Salt's avail).
	ListStates(saltenv string) []string
	// FindSLS locates an SLS: its path relative to the root ("a/b.sls" or
	// "a/b/init.sls") and its contents; ok is false when it is absent.
	FindSLS(ctx context.Context, sls, saltenv string) (rel string, src []byte, ok bool, err error)
	// ReadFile reads a file relative to the root of saltenv ("top.sls").
	ReadFile(ctx context.Context, rel, saltenv string) ([]byte, bool, error)
}

// RenderFunc renders an SLS file into data. A *RenderError (or any
// error) is reported as "Rendering SLS 'env:sls' failed: <err>".
type RenderFunc func(ctx context.Context, src []byte, rel, saltenv, sls string) (any, error)

// MatchFunc reports whether a top file target matches this minion with
// the matcher named by `match:` ("compound" by default).
type MatchFunc func(tgt any, matcher string) (bool, error)

// HighState gathers top files and renders SLS files into high data
// (salt/state.py BaseHighState).
type HighState struct {
	Files  Source
	Render RenderFunc
	Match  MatchFunc
	// Saltenv restricts the run to one environment (opts saltenv).
	Saltenv string
	// AutoOrder is state_auto_order (default true).
	AutoOrder bool
	// TopErrors collects top files that failed to render; GetTop treats
	// them as empty, as Salt's get_top does after logging.
	TopErrors []string
	// Log receives Salt's render failure messages; nil discards them.
	Log *slog.Logger
	// TopFile is the top file's path in each saltenv (opts state_top,
	// set by state.top); "" is top.sls.
	TopFile string
	// TopSaltenv, when set, reads the top file from that saltenv only
	// (opts state_top_saltenv).
	TopSaltenv string

	iorder int
	avail  map[string][]string
}

// NewHighState returns a HighState with Salt's defaults.
func NewHighState(files Source, render RenderFunc, match MatchFunc) *HighState {
	return &HighState{Files: files, Render: render, Match: match, AutoOrder: true, iorder: 10000}
}

func (h *HighState) availFor(env string) []string {
	if h.avail == nil {
		h.avail = map[string][]string{}
	}
	if l, ok := h.avail[env]; ok {
		return l
	}
	l := h.Files.ListStates(env)
	h.avail[env] = l
	return l
}

func (h *HighState) hasEnv(env string) bool {
	for _, e := range h.Files.Envs() {
		if e == env {
			return true
		}
	}
	return false
}

// Matches is the result of top matching: saltenv → SLS names, in order.
type Matches struct {
	Envs []string
	SLS  map[string][]string
}

func (m *Matches) add(env, sls string) {
	if m.SLS == nil {
		m.SLS = map[string][]string{}
	}
	if _, ok := m.SLS[env]; !ok {
		m.Envs = append(m.Envs, env)
	}
	m.SLS[env] = append(m.SLS[env], sls)
}

func (m *Matches) ensure(env string) {
	if m.SLS == nil {
		m.SLS = map[string][]string{}
	}
	if _, ok := m.SLS[env]; !ok {
		m.Envs = append(m.Envs, env)
		m.SLS[env] = nil
	}
}

// Map returns the matches as saltenv → list, the shape of state.show_top.
func (m *Matches) Map() *ordered.Map {
	out := ordered.New()
	for _, e := range m.Envs {
		l := make([]any, len(m.SLS[e]))
		for i, s := range m.SLS[e] {
			l[i] = s
		}
		out.Set(e, l)
	}
	return out
}

// Single returns the matches for running the given SLS names in saltenv.
func Single(saltenv string, sls []string) *Matches {
	m := &Matches{}
	m.ensure(saltenv)
	m.SLS[saltenv] = append(m.SLS[saltenv], sls...)
	return m
}

// levelCritical is Salt's CRITICAL level, as internal/logging maps it.
const levelCritical = slog.Level(12)

func (h *HighState) log() *slog.Logger {
	if h.Log != nil {
		return h.Log
	}
	return slog.New(slog.DiscardHandler)
}

// renderMsg formats a render failure as render_state does.
func renderMsg(saltenv, sls string, err error) string {
	return fmt.Sprintf("Rendering SLS '%s:%s' failed: %s", saltenv, sls, err.Error())
}

// ErrNoTop marks a top file that matched nothing.
var ErrNoTop = errors.New("no top file matches")

var relInclude = regexp.MustCompile(`^(\.+)(.*)$`)
