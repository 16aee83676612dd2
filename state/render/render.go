// Package render is Salt's render pipeline for SLS files (salt/template.py
// compile_template): a `#!` first line picks the renderers, `jinja|yaml`
// is the default, and each renderer's output feeds the next. Jinja is
// plugged in as a function so that this package does not depend on the
// template engine's internals.
package render

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/saltyaml"
)

// JinjaFunc renders a Jinja template. name is the template's path
// relative to the file root; vars is the render context.
type JinjaFunc func(ctx context.Context, src, name string, vars map[string]any) (string, error)

// Renderer renders SLS and top files.
type Renderer struct {
	Jinja JinjaFunc
	// Default is the renderer pipe used without a shebang; "" means
	// "jinja|yaml" (Salt's `renderer` option).
	Default string
	Log     *slog.Logger
}

// Context describes the file being rendered.
type Context struct {
	Saltenv string
	SLS     string // "web.server"; "" for a top file
	// Rel is the path relative to the file root ("web/server/init.sls").
	Rel string
	// Path is the path on disk, Salt's tmplpath; Rel when unknown.
	Path string
	// Vars are the base Jinja variables: grains, pillar, opts, salt and
	// any extra context.
	Vars map[string]any
}

// RenderError is a failure of a renderer; its text is what Salt puts
// after "Rendering SLS '<env>:<sls>' failed: ".
type RenderError struct {
	Renderer string
	Msg      string
	Err      error
}

func (e *RenderError) Error() string { return e.Msg }

// Unwrap returns the renderer's error.
func (e *RenderError) Unwrap() error { return e.Err }

// ErrUnsupported marks a renderer Brine does not implement (gpg, py, …).
var ErrUnsupported = errors.New("renderer not supported")

type stage struct{ name, args string }

// Pipe returns the renderer pipe of src: the shebang's when the first
// line is `#!name|name` (but not a `#!/path`), else def.
func Pipe(src []byte, def string) string {
	line, _, _ := bytes.Cut(src, []byte("\n"))
	l := string(line)
	if strings.HasPrefix(l, "#!") && !strings.HasPrefix(l, "#!/") {
		return strings.TrimSpace(l)[2:]
	}
	return def
}

var known = map[string]bool{"jinja": true, "yaml": true, "json": true, "yamlex": true, "text": true, "raw": true}

var unsupported = map[string]bool{
	"gpg": true, "py": true, "pydsl": true, "pyobjects": true, "mako": true, "wempy": true,
	"genshi": true, "cheetah": true, "jsonnet": true, "hjson": true, "toml": true, "nacl": true,
	"aws_kms": true, "stateconf": true, "dson": true, "msgpack": true, "yamlex_": true,
}

func parsePipe(pipe string) ([]stage, error) {
	var out []stage
	for _, part := range strings.Split(pipe, "|") {
		part = strings.TrimSpace(part)
		name, args, _ := strings.Cut(part+" ", " ")
		switch {
		case known[name]:
			out = append(out, stage{name, strings.TrimSpace(args)})
		case unsupported[name]:
			return nil, fmt.Errorf("the %q renderer is not supported by Brine: %w", name, ErrUnsupported)
		default:
			return nil, fmt.Errorf("the renderer %q is not available", pipe)
		}
	}
	return out, nil
}

// Render runs src through its renderer pipe and returns the data: an
// *ordered.Map for a normal SLS, nil for an empty one.
func (r *Renderer) Render(ctx context.Context, src []byte, c Context) (any, error) {
	if len(bytes.TrimSpace(src)) == 0 {
		return ordered.New(), nil
	}
	def := r.Default
	if def == "" {
		def = "jinja|yaml"
	}
	pipeStr := Pipe(src, def)
	stages, err := parsePipe(pipeStr)
	if err != nil {
		if errors.Is(err, ErrUnsupported) {
			return nil, &RenderError{Msg: err.Error(), Err: err}
		}
		// Salt logs the missing renderer and renders nothing.
		r.log().Error(fmt.Sprintf("The renderer \"%s\" is not available", pipeStr))
		return ordered.New(), nil
	}
	var data any = string(src)
	for _, st := range stages {
		if data, err = r.stage(ctx, st, data, c); err != nil {
			return nil, err
		}
	}
	if s, ok := data.(string); ok {
		return s, nil
	}
	return data, nil
}

func (r *Renderer) log() *slog.Logger {
	if r.Log != nil {
		return r.Log
	}
	return slog.New(slog.DiscardHandler)
}

func text(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return ""
	}
	return ordered.KeyString(v)
}

func (r *Renderer) stage(ctx context.Context, st stage, in any, c Context) (any, error) {
	switch st.name {
	case "jinja":
		if r.Jinja == nil {
			return nil, &RenderError{Renderer: "jinja", Msg: "the jinja renderer is not available"}
		}
		out, err := r.Jinja(ctx, text(in), c.Rel, r.vars(c))
		if err != nil {
			return nil, &RenderError{Renderer: "jinja", Msg: err.Error(), Err: err}
		}
		return out, nil
	case "yaml", "yamlex":
		s, ok := in.(string)
		if !ok {
			return in, nil
		}
		v, err := saltyaml.Load([]byte(s), c.Rel)
		if err != nil {
			return nil, &RenderError{Renderer: "yaml", Msg: err.Error(), Err: err}
		}
		if v == nil {
			return ordered.New(), nil
		}
		return v, nil
	case "json":
		s, ok := in.(string)
		if !ok {
			return in, nil
		}
		if strings.HasPrefix(s, "#!") {
			// salt/renderers/json.py drops the shebang line.
			_, s, _ = strings.Cut(s, "\n")
		}
		if strings.TrimSpace(s) == "" {
			return ordered.New(), nil
		}
		v, err := ordered.DecodeJSON(strings.NewReader(s))
		if err != nil {
			return nil, &RenderError{Renderer: "json", Msg: err.Error(), Err: err}
		}
		return v, nil
	}
	return in, nil
}

// vars builds the Jinja context Salt passes to an SLS template
// (salt/utils/templates.py wrap_tmpl_func, generate_sls_context).
func (r *Renderer) vars(c Context) map[string]any {
	v := make(map[string]any, len(c.Vars)+12)
	for k, x := range c.Vars {
		v[k] = x
	}
	v["saltenv"] = c.Saltenv
	v["sls"] = c.SLS
	for k, x := range SLSContext(c.Path, c.Rel, c.SLS) {
		v[k] = x
	}
	return v
}

// SLSContext returns tplpath, tplfile, tpldir, tpldot, slspath,
// slsdotpath, slscolonpath and sls_path for a template (generate_sls_context).
func SLSContext(tplpath, rel, sls string) map[string]any {
	out := map[string]any{}
	slspath := strings.ReplaceAll(sls, ".", "/")
	if tplpath == "" {
		tplpath = rel
	}
	if tplpath != "" {
		tpl := tplpath
		switch {
		case sls == "":
			tpl = path.Base(tpl)
		case strings.HasSuffix(tpl, slspath+".sls"):
			tpl = tpl[len(tpl)-(4+len(slspath)):]
		case strings.HasSuffix(tpl, slspath+"/init.sls"):
			tpl = tpl[len(tpl)-(9+len(slspath)):]
		}
		slspath = ""
		if i := strings.LastIndex(tpl, "/"); i >= 0 {
			slspath = tpl[:i]
		}
		dir := slspath
		if dir == "" {
			dir = "."
		}
		out["tplpath"], out["tplfile"], out["tpldir"] = tplpath, tpl, dir
		out["tpldot"] = strings.ReplaceAll(slspath, "/", ".")
	}
	out["slspath"] = slspath
	out["slsdotpath"] = strings.ReplaceAll(slspath, "/", ".")
	out["slscolonpath"] = strings.ReplaceAll(slspath, "/", ":")
	out["sls_path"] = strings.ReplaceAll(slspath, "/", "_")
	return out
}
