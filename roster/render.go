package roster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// DefaultRenderer is Salt's default render pipeline (master opt renderer).
const DefaultRenderer = "jinja|yaml"

// RenderFunc is the Jinja step of the pipeline, injected by cmd/ with the
// master's template context (opts, salt functions, …). name is the roster
// path, for error messages. An error that carries a line should be, or
// wrap, a *Error or any error with a `Line int` reachable through
// LineOf.
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

// hasJinja reports whether src contains Jinja markup; without an injected
// RenderFunc such a roster cannot be read.
func hasJinja(src []byte) bool {
	return bytes.Contains(src, []byte("{{")) || bytes.Contains(src, []byte("{%")) || bytes.Contains(src, []byte("{#"))
}

// runText applies the text renderers of p to src.
func runText(ctx context.Context, p pipeline, src []byte, file string, render RenderFunc) ([]byte, error) {
	for range p.text {
		if render == nil {
			if hasJinja(src) {
				return nil, &Error{File: file, Line: 1, Msg: "render jinja: no jinja renderer configured"}
			}
			continue
		}
		out, err := render(ctx, src, file)
		if err != nil {
			return nil, &Error{File: file, Line: LineOf(err), Msg: "render jinja: " + err.Error(), Err: err}
		}
		src = out
	}
	return src, nil
}

// LineOf returns the 1-based line an error points at, or 0: the Line of a
// *Error, or the int field Line of any struct error in the chain (as
// state/jinja's and state/saltyaml's typed errors have), so that roster
// need not import every renderer.
func LineOf(err error) int {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if re, ok := e.(*Error); ok {
			return re.Line
		}
		v := reflect.ValueOf(e)
		if v.Kind() == reflect.Pointer && !v.IsNil() {
			v = v.Elem()
		}
		if v.Kind() == reflect.Struct {
			if f := v.FieldByName("Line"); f.IsValid() && f.CanInt() {
				return int(f.Int())
			}
		}
	}
	return 0
}
