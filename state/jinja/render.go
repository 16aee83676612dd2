package jinja

import (
	"context"
	"errors"
	"path"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
)

// SaltCaller runs an execution module function for salt['mod.fun'](...).
// Errors it returns are reported as Salt reports a CommandExecutionError:
// "Problem running salt function in Jinja template: ...".
type SaltCaller interface {
	Call(ctx context.Context, fun string, args []any, kwargs *ordered.Map) (any, error)
}

// SaltLister is optionally implemented by a SaltCaller so that templates
// can test availability with {% if 'pkg.install' in salt %}.
type SaltLister interface {
	Has(fun string) bool
}

// Loader fetches a template for import, include and import_yaml. name is
// relative to the file root (Salt's salt:// root) after "./" and "../"
// have been resolved against tpldir. resolvedName names the template in
// errors; Salt shows the cached file's local path there.
type Loader func(name string) (src []byte, resolvedName string, err error)

// ErrTemplateNotFound may be returned (wrapped) by a Loader for a missing
// template; {% include ... ignore missing %} skips only this error.
var ErrTemplateNotFound = errors.New("template not found")

// Options configures one Render call.
type Options struct {
	// Name is the template path ("web/init.sls"), used in errors and as
	// the base of relative imports when Vars has no tpldir.
	Name string
	// Vars is the render context: grains, pillar, opts, saltenv, sls,
	// slspath, tpldir, tplfile, tplpath, sls_path and user context.
	Vars map[string]any
	// Salt calls execution modules for the salt global; nil leaves salt
	// undefined.
	Salt SaltCaller
	// Loader resolves imported and included templates; nil makes them
	// fail as not found.
	Loader Loader
	// AllowUndefined selects Jinja's lenient Undefined instead of Salt's
	// default StrictUndefined (Salt's allow_undefined option).
	AllowUndefined bool
	// TrimBlocks and LstripBlocks are jinja_env's trim_blocks and
	// lstrip_blocks; Salt leaves both off by default.
	TrimBlocks   bool
	LstripBlocks bool
}

// Render renders src as Salt's jinja renderer does
// (salt/utils/templates.py render_jinja_tmpl): strict undefined names,
// Salt's filters, tests and tags, and the trailing newline of the source
// kept. Failures are *Error.
func Render(ctx context.Context, src string, opts Options) (string, error) {
	r := newRunner(ctx, &opts)
	tplSrc := src
	// Salt re-adds the newline Jinja strips (os.linesep on POSIX).
	newline := ""
	if strings.HasSuffix(src, "\n") {
		newline = "\n"
	}
	tpl, err := r.parseTemplate(opts.Name, tplSrc)
	if err != nil {
		return "", r.toError(err)
	}
	r.top = tpl
	f := &frame{vars: map[string]any{}, tpl: tpl}
	for k := range opts.Vars {
		f.vars[k] = r.globals[k]
	}
	out, err := r.renderTemplate(tpl, f)
	if err != nil {
		return "", r.toError(err)
	}
	return out + newline, nil
}

func newRunner(ctx context.Context, opts *Options) *runner {
	r := &runner{
		ctx:     ctx,
		opts:    opts,
		strict:  !opts.AllowUndefined,
		lexOpts: lexOptions{trimBlocks: opts.TrimBlocks, lstripBlocks: opts.LstripBlocks},
		globals: map[string]any{},
		cache:   map[string]*template{},
	}
	// Salt puts the whole render context into the environment globals, so
	// imported templates see grains, pillar and salt even without
	// "with context".
	for k, v := range opts.Vars {
		r.globals[k] = normalize(v)
	}
	if opts.Salt != nil {
		r.globals["salt"] = &saltProxy{}
	}
	return r
}

// parseTemplate lexes and parses src, dropping one trailing newline as
// Jinja does (keep_trailing_newline is off).
func (r *runner) parseTemplate(name, src string) (*template, error) {
	body := src
	if strings.HasSuffix(body, "\r\n") {
		body = body[:len(body)-2]
	} else if strings.HasSuffix(body, "\n") || strings.HasSuffix(body, "\r") {
		body = body[:len(body)-1]
	}
	nodes, err := parse(body, r.lexOpts)
	if err != nil {
		var te *tplError
		if errors.As(err, &te) && te.name == "" {
			te.name, te.src = name, src
		}
		return nil, err
	}
	return &template{name: name, src: src, body: nodes}, nil
}

// renderTemplate runs a parsed template in f, following {% extends %}.
func (r *runner) renderTemplate(tpl *template, f *frame) (string, error) {
	var b strings.Builder
	if ext, ok := firstExtends(tpl.body); ok {
		return r.renderExtends(tpl, ext, f)
	}
	if err := r.exec(tpl.body, f, &b); err != nil {
		if err == errBreak || err == errContinue {
			return "", nil
		}
		return "", err
	}
	return b.String(), nil
}

// toError converts an internal error into Salt's *Error shape.
func (r *runner) toError(err error) error {
	var te *tplError
	if !errors.As(err, &te) {
		if ctxErr := r.ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
			return err
		}
		te = &tplError{kind: kindRuntime, msg: err.Error(), err: err}
	}
	prefix := map[errKind]string{
		kindRuntime:   "Jinja error: ",
		kindUndefined: "Jinja variable ",
		kindSyntax:    "Jinja syntax error: ",
		kindSalt:      "Problem running salt function in Jinja template: ",
	}[te.kind]
	e := &Error{Name: r.opts.Name, Msg: prefix + te.msg, err: te.err}
	switch {
	case te.line == 0:
	case te.name == r.opts.Name || te.name == "":
		e.Line = te.line
		e.Context = getContext(r.topSource(te), te.line, "    <======================")
	default:
		// Salt: the failing frame is another template, so it names that
		// file and line and shows its excerpt, with no line of its own
		// (salt/utils/templates.py _get_jinja_error).
		e.Msg += "\n" + te.name + "(" + itoa(te.line) + "):\n" +
			getContext(te.src, te.line, "    <======================")
	}
	return e
}

func (r *runner) topSource(te *tplError) string {
	if te.src != "" {
		return te.src
	}
	if r.top != nil {
		return r.top.src
	}
	return ""
}

// resolveName applies Salt's SaltCacheLoader rules: "./x" and "../x" are
// relative to tpldir, other names to the file root.
func (r *runner) resolveName(name string) (string, error) {
	first, _, _ := strings.Cut(name, "/")
	if first != "." && first != ".." {
		return name, nil
	}
	base, _ := r.globals["tpldir"].(string)
	if base == "" && r.opts.Name != "" {
		base = path.Dir(r.opts.Name)
	}
	p := path.Clean(base + "/" + name)
	if p == ".." || strings.HasPrefix(p, "../") {
		return "", &tplError{kind: kindRuntime, msg: name, err: ErrTemplateNotFound}
	}
	return p, nil
}

// load fetches and parses a template by name.
func (r *runner) load(nameVal any) (*template, error) {
	name, ok := nameVal.(string)
	if !ok {
		if u, isU := nameVal.(*undefined); isU {
			return nil, u.err()
		}
		return nil, typeErr("template name must be a string, not %s", typeName(nameVal))
	}
	resolved, err := r.resolveName(name)
	if err != nil {
		return nil, err
	}
	if t, ok := r.cache[resolved]; ok {
		return t, nil
	}
	if r.opts.Loader == nil {
		return nil, &tplError{kind: kindRuntime, msg: name, err: ErrTemplateNotFound}
	}
	src, rname, err := r.opts.Loader(resolved)
	if err != nil {
		if errors.Is(err, ErrTemplateNotFound) {
			return nil, &tplError{kind: kindRuntime, msg: name, err: err}
		}
		return nil, &tplError{kind: kindRuntime, msg: err.Error(), err: err}
	}
	if rname == "" {
		rname = resolved
	}
	t, err := r.parseTemplate(rname, string(src))
	if err != nil {
		return nil, err
	}
	r.cache[resolved] = t
	r.noteTemplate(name, resolved)
	return t, nil
}

// noteTemplate mirrors SaltCacheLoader.get_source updating the
// environment globals tpldir/tplfile/tpldot on every load.
func (r *runner) noteTemplate(name, resolved string) {
	dir := path.Dir(resolved)
	if dir == "." {
		dir = ""
	}
	file := resolved
	first, _, _ := strings.Cut(name, "/")
	if first == "." || first == ".." {
		if d, ok := r.globals["tpldir"].(string); ok {
			dir = d
		}
		file = name
	}
	tpldir := dir
	if tpldir == "" {
		tpldir = "."
	}
	r.globals["tplfile"] = file
	r.globals["tpldir"] = tpldir
	r.globals["tpldot"] = strings.ReplaceAll(dir, "/", ".")
}

func (r *runner) execInclude(n *includeNode, f *frame, w *strings.Builder) error {
	nameVal, err := r.eval(n.template, f)
	if err != nil {
		return err
	}
	names := []any{nameVal}
	if items, ok := seqItems(nameVal); ok {
		names = items
	}
	var tpl *template
	for _, nm := range names {
		tpl, err = r.load(nm)
		if err == nil {
			break
		}
		if !errors.Is(err, ErrTemplateNotFound) {
			return err
		}
	}
	if tpl == nil {
		if n.ignoreMissing {
			return nil
		}
		return err
	}
	if r.depth++; r.depth > maxDepth {
		r.depth--
		return runtimeErr("maximum recursion depth exceeded")
	}
	defer func() { r.depth-- }()
	var inner *frame
	if n.withContext {
		inner = &frame{vars: map[string]any{}, parent: f, tpl: tpl}
	} else {
		inner = &frame{vars: map[string]any{}, tpl: tpl}
	}
	out, err := r.renderTemplate(tpl, inner)
	if err != nil {
		return err
	}
	w.WriteString(out)
	return nil
}

// importModule renders tpl as a module: its top-level names become
// attributes, its output the module's str().
func (r *runner) importModule(n expr, withContext bool, f *frame) (*module, error) {
	nameVal, err := r.eval(n, f)
	if err != nil {
		return nil, err
	}
	tpl, err := r.load(nameVal)
	if err != nil {
		return nil, err
	}
	if !withContext && tpl.module != nil {
		return tpl.module, nil
	}
	if r.depth++; r.depth > maxDepth {
		r.depth--
		return nil, runtimeErr("maximum recursion depth exceeded")
	}
	defer func() { r.depth-- }()
	inner := &frame{vars: map[string]any{}, tpl: tpl}
	if withContext {
		inner.parent = f
	}
	out, err := r.renderTemplate(tpl, inner)
	if err != nil {
		return nil, err
	}
	m := &module{name: tpl.name, exports: ordered.New(), output: out}
	names := make([]string, 0, len(inner.vars))
	for k := range inner.vars {
		names = append(names, k)
	}
	sortStrings(names)
	for _, k := range names {
		if !strings.HasPrefix(k, "_") {
			m.exports.Set(k, inner.vars[k])
		}
	}
	if !withContext {
		tpl.module = m
	}
	return m, nil
}

func (r *runner) execImport(n *importNode, f *frame) error {
	m, err := r.importModule(n.template, n.withContext, f)
	if err != nil {
		return err
	}
	if n.loadAs == "" {
		f.vars[n.target] = m
		return nil
	}
	v, err := r.loadFormat(n.loadAs, m.output)
	if err != nil {
		return err
	}
	f.vars[n.target] = v
	return nil
}

func (r *runner) execFromImport(n *fromImportNode, f *frame) error {
	m, err := r.importModule(n.template, n.withContext, f)
	if err != nil {
		return err
	}
	for _, pair := range n.names {
		v, ok := m.exports.Get(pair[0])
		if !ok {
			v = &undefined{hint: "the template " + py.QuoteString(m.name) + " (imported on line " + itoa(n.line) + ") does not export the requested name " + py.QuoteString(pair[0])}
		}
		f.vars[pair[1]] = v
	}
	return nil
}
