package roster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/brinesalt/brine/internal/saltyaml"
	"github.com/brinesalt/brine/state/jinja"
)

// DefaultRenderer is Salt's default render pipeline (master opt renderer).
const DefaultRenderer = "jinja|yaml"

// RenderFunc is the Jinja step of the pipeline, injected by cmd/ with the
// master's template context (opts, salt functions, …); see JinjaRender.
// name is the roster path, for error messages. An error that carries a
// line should wrap a *jinja.Error or a *Error (see LineOf).
type RenderFunc func(ctx context.Context, src []byte, name string) ([]byte, error)

// oldStyleRenderers maps Salt's legacy pipe names (salt/template.py
// OLD_STYLE_RENDERERS) onto pipes.
var oldStyleRenderers = map[string]string{
	"yaml_jinja":   "jinja|yaml",
	"json_jinja":   "jinja|json",
	"yamlex_jinja": "jinja|yamlex",
}

// pipeline is a parsed render pipe: optional text renderers, then the data
// renderer that must close it.
type pipeline struct {
	text []string // e.g. ["jinja"]
	data string   // "yaml", "json" or "yamlex"
}

// parsePipe reads a pipe string such as "jinja|yaml" (the shebang line of
// the roster without "#!", or the renderer option) the way
// salt/template.py check_render_pipe_str does: parts split on "|", each
// part's first word naming the renderer and the rest its argline.
func parsePipe(pipe string) (pipeline, error) {
	pipe = strings.TrimSpace(pipe)
	if p, ok := oldStyleRenderers[pipe]; ok {
		pipe = p
	}
	var p pipeline
	for _, part := range strings.Split(pipe, "|") {
		name, _, _ := strings.Cut(strings.TrimSpace(part)+" ", " ")
		if p.data != "" {
			return p, fmt.Errorf("renderer %q after the data renderer %q", name, p.data)
		}
		switch name {
		case "jinja":
			p.text = append(p.text, name)
		case "yaml", "json", "yamlex":
			p.data = name
		default:
			return p, fmt.Errorf("renderer %q is not supported for rosters", name)
		}
	}
	if p.data == "" {
		return p, fmt.Errorf("render pipe %q does not end in yaml or json", pipe)
	}
	return p, nil
}

// pipeFor returns the pipe for src: its shebang line ("#!jinja|yaml", but
// not "#!/path") or the default (salt/template.py template_shebang).
func pipeFor(src []byte, def string) string {
	line, _, _ := bytes.Cut(src, []byte("\n"))
	if bytes.HasPrefix(line, []byte("#!")) && !bytes.HasPrefix(line, []byte("#!/")) {
		return strings.TrimSpace(string(line[2:]))
	}
	if def == "" {
		return DefaultRenderer
	}
	return def
}

// jinjaMsg is the message of a render error without the source excerpt
// Salt appends (the Error already carries the line).
func jinjaMsg(err error) string {
	var je *jinja.Error
	if errors.As(err, &je) {
		return je.Msg
	}
	return err.Error()
}

// runText applies the text renderers of p to src; without an injected
// RenderFunc, Jinja runs with an empty context.
func runText(ctx context.Context, p pipeline, src []byte, file string, render RenderFunc) ([]byte, error) {
	if render == nil {
		render = JinjaRender(jinja.Options{})
	}
	for range p.text {
		out, err := render(ctx, src, file)
		if err != nil {
			return nil, &Error{File: file, Line: LineOf(err), Msg: "render jinja: " + jinjaMsg(err), Err: err}
		}
		src = out
	}
	return src, nil
}

// LineOf returns the 1-based line an error points at, or 0: the Line of
// a *Error, a *jinja.Error or a *saltyaml.Error in the chain.
func LineOf(err error) int {
	var re *Error
	var je *jinja.Error
	var ye *saltyaml.Error
	switch {
	case errors.As(err, &re):
		return re.Line
	case errors.As(err, &je):
		return je.Line
	case errors.As(err, &ye):
		return ye.Line
	}
	return 0
}

// JinjaRender returns a RenderFunc that renders with state/jinja, using
// base for the context (cmd/ passes opts, grains and the salt caller as
// Salt's master-side renderer has them); Name is set to the roster path.
func JinjaRender(base jinja.Options) RenderFunc {
	return func(ctx context.Context, src []byte, name string) ([]byte, error) {
		o := base
		o.Name = name
		out, err := jinja.Render(ctx, string(src), o)
		if err != nil {
			return nil, fmt.Errorf("render %s: %w", name, err)
		}
		return []byte(out), nil
	}
}
