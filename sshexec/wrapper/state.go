// Package wrapper holds the controller side of functions that salt-ssh
// does not simply run on a host, after salt/client/ssh/wrapper: the state
// functions render SLS files on the controller, with the host's grains
// and the pillar compiled for that host alone, and send the host only the
// rendered high data, its pillar and the salt:// files the states use.
package wrapper

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/sshexec"
	"github.com/brinesalt/brine/state/apply"
	"github.com/brinesalt/brine/state/fileclient"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/states"
)

// IsState reports whether fun is a state function salt-ssh plans on the
// controller.
func IsState(fun string) bool {
	switch fun {
	case "state.apply", "state.sls", "state.highstate", "state.test", "state.top", "state.template_str",
		"state.show_sls", "state.show_low_sls", "state.show_highstate", "state.show_lowstate",
		"state.show_top", "state.show_states", "state.show_state_usage", "state.sls_exists", "state.id_exists":
		return true
	}
	return false
}

// localModules run on the controller with the host's grains and pillar,
// as Salt's wrapper modules of the same names do; any other function a
// template calls runs on the host.
var localModules = map[string]bool{"grains": true, "pillar": true, "config": true, "match": true, "test": true}

// States plans state functions for salt-ssh.
type States struct {
	// Opts are the master's options: file_roots and pillar_roots above all.
	Opts   *ordered.Map
	States *states.Registry
	Funcs  *modules.Registry // the functions known locally; modules.Default
	Log    *slog.Logger
	// Mine answers mine.get in templates on the controller, as salt-ssh's
	// mine wrapper does (the hosts keep no mine); nil sends it to the host.
	Mine modules.Func

	sums sync.Map // path|size|mtime → sha256, so each large file is hashed once a run
}

// inlineMax is the largest file that travels inside the job; larger ones
// go once to the host's content cache (<thin_dir>/files/<sha256>) over
// SFTP, so an unchanged re-run sends nothing and the controller never
// holds a big file in memory per host.
const inlineMax = 256 << 10

// Plan returns the executor's planner for one call of fun.
func (s *States) Plan(fun string, args []any, kwargs *ordered.Map) func(context.Context, *sshexec.Host) (*sshexec.Plan, error) {
	return func(ctx context.Context, h *sshexec.Host) (*sshexec.Plan, error) {
		grains, err := h.Grains(ctx)
		if err != nil {
			return nil, fmt.Errorf("learn the grains of %s: %w", h.Target.ID, err)
		}
		env := s.env(h, grains)
		pr, err := apply.Plan(ctx, env, s.States, fun, args, kwargs)
		if err != nil {
			return &sshexec.Plan{Done: true, Return: err.Error(), Retcode: 1}, nil
		}
		out := apply.Outputter(fun)
		if pr.HasDone {
			rc, _ := env.Context["retcode"].(int)
			return &sshexec.Plan{Done: true, Return: pr.Done, Retcode: rc, Out: out}, nil
		}
		files, uploads, err := s.files(ctx, pr.High)
		if err != nil {
			return nil, err
		}
		return &sshexec.Plan{
			Fun: "state.high", Arg: []any{pr.High}, Kwarg: ordered.FromPairs("test", pr.Test),
			Pillar: pr.Pillar, Data: ordered.FromPairs("files", files), Out: out, Uploads: uploads,
		}, nil
	}
}

// env is the host as the compiler sees it: its grains, the master's
// roots, its id, and functions split between the controller and the host.
func (s *States) env(h *sshexec.Host, grains *ordered.Map) *modules.Env {
	opts := s.Opts.Copy()
	h.Target.MinionOpts.Range(func(k, v any) bool { opts.Set(k, v); return true })
	opts.Set("id", h.Target.ID)
	env := (&modules.Env{Opts: opts, Log: s.Log, Context: map[string]any{}}).WithGrains(grains)
	env.Registry = s.registry(env, h)
	return env
}

// registry offers templates every function: local ones as they are,
// the rest forwarded to the host, arguments untouched.
func (s *States) registry(env *modules.Env, h *sshexec.Host) *modules.Registry {
	r := modules.NewRegistry()
	if s.Mine != nil {
		r.Register(modules.Function{Name: "mine.get", Spec: modules.Spec{VarArgs: true, VarKw: true}, Fn: s.Mine})
	}
	for _, name := range s.Funcs.Names(env) {
		if name == "mine.get" && s.Mine != nil {
			continue
		}
		mod, _, _ := strings.Cut(name, ".")
		if localModules[mod] {
			if f, err := s.Funcs.Lookup(env, name); err == nil {
				r.Register(*f)
			}
			continue
		}
		fun := name
		r.Register(modules.Function{Name: fun, Spec: modules.Spec{VarArgs: true, VarKw: true},
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				ret, rc, err := h.Call(ctx, fun, c.VarArgs, c.Kwargs)
				if err != nil {
					return nil, err
				}
				if rc != 0 {
					return nil, modules.Errorf("%s failed on %s: %v", fun, h.Target.ID, ret)
				}
				return ret, nil
			}})
	}
	return r
}

// files collects the salt:// files the high data refers to (Salt's
// lowstate_file_refs), whole directories included, keyed by saltenv and
// path as the thin binary's file client reads them. Small files travel
// inline; large ones by sha256, with their local paths in uploads.
func (s *States) files(ctx context.Context, high *ordered.Map) (*ordered.Map, map[string]string, error) {
	roots, order := fileRoots(s.Opts)
	fc := fileclient.New(roots, order)
	refs := map[string]map[string]bool{}
	walkRefs(high, "base", refs)
	out := ordered.New()
	uploads := map[string]string{}
	envs := make([]string, 0, len(refs))
	for e := range refs {
		envs = append(envs, e)
	}
	sort.Strings(envs)
	for _, saltenv := range envs {
		files := ordered.New()
		list := fc.FileList(saltenv)
		for ref := range refs[saltenv] {
			rel := strings.Trim(path.Clean("/"+ref), "/")
			for _, f := range list {
				if f != rel && !strings.HasPrefix(f, rel+"/") {
					continue
				}
				entry, local, err := s.entry(ctx, fc, f, saltenv)
				if err != nil {
					return nil, nil, err
				}
				if entry == nil {
					continue
				}
				files.Set(f, entry)
				if local != "" {
					uploads[entry.(*ordered.Map).Value("sha256").(string)] = local
				}
			}
		}
		out.Set(saltenv, files)
	}
	return out, uploads, nil
}

// entry is one file's job entry: its content, or for a large file its
// sha256 and the local path to send it from.
func (s *States) entry(ctx context.Context, fc *fileclient.Client, rel, saltenv string) (any, string, error) {
	local := fc.LocalPath("salt://"+rel, saltenv)
	st, err := os.Stat(local)
	if err != nil {
		return nil, "", nil
	}
	if st.Size() <= inlineMax {
		b, ok, err := fc.ReadFile(ctx, rel, saltenv)
		if err != nil {
			return nil, "", fmt.Errorf("read salt://%s: %w", rel, err)
		}
		if !ok {
			return nil, "", nil
		}
		return shipped(b), "", nil
	}
	key := fmt.Sprintf("%s|%d|%d", local, st.Size(), st.ModTime().UnixNano())
	sum, ok := s.sums.Load(key)
	if !ok {
		f, err := os.Open(local)
		if err != nil {
			return nil, "", fmt.Errorf("read salt://%s: %w", rel, err)
		}
		h := sha256.New()
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return nil, "", fmt.Errorf("read salt://%s: %w", rel, err)
		}
		sum = hex.EncodeToString(h.Sum(nil))
		s.sums.Store(key, sum)
	}
	return ordered.FromPairs("sha256", sum, "size", int(st.Size())), local, nil
}

// shipped encodes file content for the job: text as is, bytes in base64.
func shipped(b []byte) any {
	if utf8.Valid(b) {
		return string(b)
	}
	return ordered.FromPairs("base64", base64.StdEncoding.EncodeToString(b))
}

// walkRefs records every salt:// string in v, with the saltenv of the
// state that holds it (__env__), or of the URL's ?saltenv=.
func walkRefs(v any, saltenv string, refs map[string]map[string]bool) {
	switch x := v.(type) {
	case string:
		if !strings.HasPrefix(x, "salt://") {
			return
		}
		rel, env := fileclient.ParseURL(x)
		if env == "" {
			env = saltenv
		}
		if refs[env] == nil {
			refs[env] = map[string]bool{}
		}
		refs[env][rel] = true
	case []any:
		for _, e := range x {
			walkRefs(e, saltenv, refs)
		}
	case *ordered.Map:
		if e, ok := x.Value("__env__").(string); ok && e != "" {
			saltenv = e
		}
		x.Range(func(_, v any) bool { walkRefs(v, saltenv, refs); return true })
	}
}

func fileRoots(opts *ordered.Map) (map[string][]string, []string) {
	m := map[string][]string{}
	var order []string
	if r, ok := opts.Value("file_roots").(*ordered.Map); ok {
		r.Range(func(k, v any) bool {
			env := ordered.KeyString(k)
			order = append(order, env)
			if l, ok := v.([]any); ok {
				for _, d := range l {
					m[env] = append(m[env], ordered.KeyString(d))
				}
			}
			return true
		})
	}
	return m, order
}
