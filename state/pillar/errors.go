package pillar

import (
	"errors"
	"fmt"

	"github.com/brinesalt/brine/internal/saltyaml"
	"github.com/brinesalt/brine/state/jinja"
)

// RenderError is a pillar SLS that failed to render, with the file and
// line the renderer reported (0 when it named none). Compile logs it;
// the pillar's `_errors` carries Salt's wording.
type RenderError struct {
	SLS     string
	Saltenv string
	// File is the SLS path relative to its pillar root ("a/b.sls"), or
	// the template a Jinja error happened in.
	File string
	Line int
	Err  error
}

// Error names the SLS, its file and line, and the renderer's message.
func (e *RenderError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("render pillar SLS '%s' (%s, line %d): %s", e.SLS, e.File, e.Line, e.Err.Error())
	}
	return fmt.Sprintf("render pillar SLS '%s' (%s): %s", e.SLS, e.File, e.Err.Error())
}

// Unwrap returns the renderer's error.
func (e *RenderError) Unwrap() error { return e.Err }

// newRenderError finds the position a YAML or Jinja error carries.
func newRenderError(sls, env, rel string, err error) *RenderError {
	re := &RenderError{SLS: sls, Saltenv: env, File: rel, Err: err}
	var ye *saltyaml.Error
	var je *jinja.Error
	switch {
	case errors.As(err, &je):
		re.Line = je.Line
		if je.Name != "" {
			re.File = je.Name
		}
	case errors.As(err, &ye):
		re.Line = ye.Line
		if ye.File != "" {
			re.File = ye.File
		}
	}
	return re
}
