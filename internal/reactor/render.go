package reactor

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/compile"
	"github.com/brinesalt/brine/state/fileclient"
	"github.com/brinesalt/brine/state/jinja"
	"github.com/brinesalt/brine/state/render"
)

// aliases are the legacy reaction kinds (Reactor.aliases).
var aliases = map[string]string{"cmd": "local"}

// renderer renders reactor SLS files as the master's own minion does
// (Reactor.render_reaction with the master's renderer option): `salt`
// is the MasterMinion's execution functions and `grains` its host's
// grains, `pillar` is empty (salt/minion.py MasterMinion).
type renderer struct {
	files    *fileclient.Client
	opts     *ordered.Map
	pipe     string
	log      *slog.Logger
	jinjaEnv jinja.Options
	salt     jinja.SaltCaller
	grains   func() *ordered.Map
}

// reactions renders every file of sls for the event and compiles the
// merged high data to ordered low chunks (Reactor.reactions). Files
// that are missing or fail to render are logged with the tag and left
// out; invalid high data is logged and runs nothing.
func (r *renderer) reactions(ctx context.Context, tag string, data *ordered.Map, sls []string) []compile.Chunk {
	high := ordered.New()
	for _, ref := range sls {
		r.renderRef(ctx, ref, tag, data, high)
	}
	if high.Len() == 0 {
		return nil
	}
	if errs := compile.VerifyHigh(high); len(errs) > 0 {
		r.log.Error(fmt.Sprintf("Unable to render reactions for event %s due to errors (%s) in one or more of the sls files (%s)",
			tag, strings.Join(errs, "; "), strings.Join(sls, ", ")), logattr.Tag, tag)
		return nil
	}
	chunks := compile.CompileHigh(high)
	for _, c := range chunks {
		if st, ok := c.Value("state").(string); ok && aliases[st] != "" {
			c.Set("state", aliases[st])
		}
	}
	return chunks
}

// renderRef renders one reactor reference (a path, a glob of paths or
// a salt:// URL) into high.
func (r *renderer) renderRef(ctx context.Context, ref, tag string, data, high *ordered.Map) {
	pattern := ref
	if strings.HasPrefix(ref, "salt://") {
		// cp.cache_file on the master's own minion: the file under
		// file_roots, "" when it is not there.
		pattern = r.files.LocalPath(ref, "base")
	}
	var found []string
	if pattern != "" {
		found, _ = filepath.Glob(pattern)
	}
	if len(found) == 0 {
		r.log.Error(fmt.Sprintf("Can not render SLS %s for tag %s. File missing or not found.", ref, tag), logattr.Tag, tag, logattr.File, ref)
		return
	}
	for _, fn := range found {
		res, err := r.renderFile(ctx, fn, tag, data)
		if err != nil {
			r.log.Error(fmt.Sprintf("Failed to render %q: %s", fn, err.Error()), logattr.Tag, tag, logattr.File, fn)
			continue
		}
		for _, id := range res.Keys() {
			body, ok := res.Value(id).(*ordered.Map)
			if !ok {
				// verify_high reports it; Salt's item assignment would fail
				// on it and lose the whole file, so it is kept as it is.
				high.Set(id, res.Value(id))
				continue
			}
			body.Set("__sls__", fn)
			high.Set(id, body)
		}
	}
}

// renderFile renders one file with tag and data in the context and
// pads its function references (Compiler.render_template).
func (r *renderer) renderFile(ctx context.Context, fn, tag string, data *ordered.Map) (*ordered.Map, error) {
	src, err := os.ReadFile(fn)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", fn, err)
	}
	rr := render.Renderer{Default: r.pipe, Log: r.log, Jinja: r.jinja}
	if data == nil {
		data = ordered.New()
	}
	grains := ordered.New()
	if r.grains != nil {
		if g := r.grains(); g != nil {
			grains = g
		}
	}
	out, err := rr.Render(ctx, src, render.Context{Saltenv: "base", Path: fn, Rel: filepath.Base(fn),
		Vars: map[string]any{"tag": tag, "data": data, "opts": r.opts, "grains": grains, "pillar": ordered.New()}})
	if err != nil {
		return nil, err
	}
	high, ok := out.(*ordered.Map)
	if !ok {
		if s, isStr := out.(string); isStr && strings.TrimSpace(s) == "" {
			return ordered.New(), nil
		}
		return nil, fmt.Errorf("the reactor SLS %s does not render to a dictionary", fn)
	}
	compile.PadFuncs(high)
	return high, nil
}

// jinja renders a reactor template; includes and imports are read from
// file_roots (base), as the master minion's local file client reads them.
func (r *renderer) jinja(ctx context.Context, src, name string, vars map[string]any) (string, error) {
	o := r.jinjaEnv
	o.Name, o.Vars, o.Salt = name, vars, r.salt
	o.Loader = func(n string) ([]byte, string, error) {
		b, ok, err := r.files.ReadFile(ctx, n, "base")
		if err != nil {
			return nil, "", err
		}
		if !ok {
			return nil, "", fmt.Errorf("%s: %w", n, jinja.ErrTemplateNotFound)
		}
		return b, n, nil
	}
	return jinja.Render(ctx, src, o)
}
