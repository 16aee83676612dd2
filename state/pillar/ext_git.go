package pillar

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/fileclient"
)

// Git is salt/pillar/git_pillar.py for local repositories:
//
//	ext_pillar:
//	  - git:
//	    - master /srv/git/pillar.git
//	    - dev file:///srv/git/pillar.git:
//	      - env: dev
//	      - root: pillar
//
// Each remote is "<branch> <url>" (or a bare URL with git_pillar_branch),
// optionally with per-remote env, root, base (only for __env__), name,
// mountpoint, all_saltenvs and fallback. The branch's tree (a branch,
// tag or commit of the repository) is read with `git archive` into
// <cachedir>/git_pillar and compiled as a pillar_roots of its own with
// its own top file, environment "base" for git_pillar_base (master) and
// the branch name otherwise; the results are merged in order. With
// git_pillar_includes (the default) the other remotes of the same
// environment are further roots, so SLS files can include across them.
//
// Brine never fetches: the URL must be a local path or a file:// URL,
// and anything else is reported in `_errors`. As in Salt, a branch or
// root that does not exist is logged and the remote skipped.
var Git = ExtPillar{Name: "git", VarArgs: true, Fn: gitPillar}

// errGitConfig is Salt's FileserverConfigError from failhard().
//
//lint:ignore ST1005 Salt's exact message
var errGitConfig = errors.New("Failed to load git_pillar")

// gitRemote is one configured git_pillar remote.
type gitRemote struct {
	id, branch, url               string
	env, root, base, fallback     string
	mountpoint, allSaltenvs, name string
	hasAllSaltenvs                bool
}

// gitPerRemote are the per-remote parameters git_pillar accepts
// (PER_REMOTE_OVERRIDES and PER_REMOTE_ONLY).
var gitPerRemote = map[string]bool{"base": true, "env": true, "root": true, "ssl_verify": true, "refspecs": true,
	"fallback": true, "name": true, "mountpoint": true, "all_saltenvs": true}

func optStr(opts *ordered.Map, name, def string) string {
	v, ok := opts.Get(name)
	if !ok || v == nil {
		return def
	}
	return ordered.KeyString(v)
}

// parseGitRemote reads one entry of the git ext_pillar's list.
func parseGitRemote(x *ExtCall, entry any) (*gitRemote, error) {
	r := &gitRemote{
		base: optStr(x.Opts, "git_pillar_base", "master"), env: optStr(x.Opts, "git_pillar_env", ""),
		root: optStr(x.Opts, "git_pillar_root", ""), fallback: optStr(x.Opts, "git_pillar_fallback", ""),
	}
	var conf *ordered.Map
	switch e := entry.(type) {
	case string:
		r.id = e
	case *ordered.Map:
		if e.Len() != 1 {
			return nil, fmt.Errorf("%w: remote %s is not a single mapping", errGitConfig, e.Keys())
		}
		k := e.Keys()[0]
		r.id = ordered.KeyString(k)
		var err error
		if conf, err = repackDictList(e.Value(k)); err != nil || conf.Len() == 0 {
			return nil, fmt.Errorf("%w: invalid per-remote configuration for git_pillar remote '%s'", errGitConfig, r.id)
		}
	default:
		return nil, fmt.Errorf("%w: invalid git_pillar remote %v", errGitConfig, entry)
	}
	if branch, url, ok := strings.Cut(strings.TrimSpace(r.id), " "); ok {
		r.branch, r.url = branch, strings.TrimSpace(url)
	} else {
		r.branch, r.url = optStr(x.Opts, "git_pillar_branch", "master"), r.id
	}
	if conf != nil {
		if err := r.apply(conf); err != nil {
			return nil, err
		}
	}
	return r, nil
}

func (r *gitRemote) apply(conf *ordered.Map) error {
	var err error
	conf.Range(func(k, v any) bool {
		name := ordered.KeyString(k)
		if !gitPerRemote[name] {
			err = fmt.Errorf("%w: invalid configuration parameter '%s' for git_pillar remote '%s'", errGitConfig, name, r.id)
			return false
		}
		if name == "base" && r.branch != "__env__" {
			err = fmt.Errorf("%w: base can only be specified if __env__ is specified as the branch name (remote '%s')", errGitConfig, r.id)
			return false
		}
		s := ordered.KeyString(v)
		switch name {
		case "base":
			r.base = s
		case "env":
			r.env = s
		case "root":
			r.root = s
		case "fallback":
			r.fallback = s
		case "mountpoint":
			r.mountpoint = strings.Trim(strings.TrimPrefix(s, "salt://"), "/")
		case "all_saltenvs":
			r.allSaltenvs, r.hasAllSaltenvs = s, true
		case "name":
			r.name = s
		}
		return true
	})
	return err
}

// repackDictList turns [{a: 1}, {b: 2}] into {a: 1, b: 2}
// (salt.utils.data.repack_dictlist, strict).
func repackDictList(v any) (*ordered.Map, error) {
	out := ordered.New()
	l, ok := v.([]any)
	if !ok {
		if m, isMap := v.(*ordered.Map); isMap {
			return m, nil
		}
		return out, fmt.Errorf("per-remote configuration is not a list")
	}
	for _, e := range l {
		m, ok := e.(*ordered.Map)
		if !ok || m.Len() != 1 {
			return out, fmt.Errorf("per-remote parameter %v is not a single mapping", e)
		}
		m.Range(func(k, v any) bool { out.Set(k, v); return true })
	}
	return out, nil
}

// target is the branch, tag or commit to read (get_checkout_target).
func (r *gitRemote) target(opts *ordered.Map) string {
	if r.branch != "__env__" {
		return r.branch
	}
	if r.hasAllSaltenvs {
		return r.allSaltenvs
	}
	t := optStr(opts, "pillarenv", "")
	if t == "" {
		t = optStr(opts, "saltenv", "")
	}
	if t == "" || t == "base" {
		return r.base
	}
	return t
}

// saltenv is the pillar environment of the remote (GitPillar.checkout).
func (r *gitRemote) saltenv(opts *ordered.Map) string {
	switch {
	case r.branch == "__env__" && r.hasAllSaltenvs:
		return firstNonEmpty(optStr(opts, "pillarenv", ""), optStr(opts, "saltenv", ""), "base")
	case r.env != "":
		return r.env
	case r.branch == r.base:
		return "base"
	}
	if t := r.target(opts); t != r.base {
		return t
	}
	return "base"
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// localPath is the repository directory of a local URL.
func (r *gitRemote) localPath() (string, error) {
	u := r.url
	if rest, ok := strings.CutPrefix(u, "file://"); ok {
		u = rest
	}
	if !filepath.IsAbs(u) {
		return "", fmt.Errorf("git_pillar remote '%s' is not a local repository: Brine reads local paths and file:// URLs only, and never fetches", r.id)
	}
	return u, nil
}

// gitDir is one checked-out remote: its pillar root and environment.
type gitDir struct {
	dir, env string
	linked   bool
}

func gitPillar(ctx context.Context, x *ExtCall) (any, error) {
	var remotes []*gitRemote
	for _, e := range x.VarArgs {
		r, err := parseGitRemote(x, e)
		if err != nil {
			x.Log.Error(err.Error())
			return nil, errGitConfig
		}
		remotes = append(remotes, r)
	}
	cache := filepath.Join(optStr(x.Opts, "cachedir", "/var/cache/salt/master"), "git_pillar")
	var dirs []gitDir
	for _, r := range remotes {
		d, ok, err := r.checkout(ctx, x, cache)
		if err != nil {
			return nil, err
		}
		if ok {
			dirs = append(dirs, d)
		}
	}
	return compileGitDirs(ctx, x, dirs)
}

// checkout materializes the remote's tree; ok is false when the remote
// is skipped (missing ref or root), which Salt only logs.
func (r *gitRemote) checkout(ctx context.Context, x *ExtCall, cache string) (gitDir, bool, error) {
	repo, err := r.localPath()
	if err != nil {
		return gitDir{}, false, err
	}
	tgt := r.target(x.Opts)
	commit, err := resolveCommit(ctx, repo, tgt)
	if err != nil && r.fallback != "" {
		commit, err = resolveCommit(ctx, repo, r.fallback)
	}
	if err != nil {
		x.Log.Error(fmt.Sprintf("Failed to checkout %s from git_pillar remote '%s': %s", tgt, r.id, err.Error()))
		return gitDir{}, false, nil
	}
	sum := sha256.Sum256([]byte(r.id))
	hash := hex.EncodeToString(sum[:8])
	tree := filepath.Join(cache, hash, commit)
	if err := extractTree(ctx, repo, commit, tree); err != nil {
		return gitDir{}, false, fmt.Errorf("checkout git_pillar remote '%s': %w", r.id, err)
	}
	root := filepath.Join(tree, filepath.FromSlash(strings.Trim(r.root, "/")))
	if st, err := os.Stat(root); err != nil || !st.IsDir() {
		x.Log.Error(fmt.Sprintf("Root path '%s' not present in git_pillar remote '%s', skipping.", r.root, r.id))
		return gitDir{}, false, nil
	}
	d := gitDir{dir: root, env: r.saltenv(x.Opts)}
	if r.mountpoint != "" {
		link := filepath.Join(cache, "links", hash, commit)
		if err := linkMountpoint(link, r.mountpoint, root); err != nil {
			return gitDir{}, false, fmt.Errorf("mount git_pillar remote '%s': %w", r.id, err)
		}
		d.dir, d.linked = link, true
	}
	return d, true, nil
}

// resolveCommit finds ref among the repository's branches, tags and
// commits.
func resolveCommit(ctx context.Context, repo, ref string) (string, error) {
	for _, cand := range []string{"refs/heads/" + ref, "refs/tags/" + ref, "refs/remotes/origin/" + ref, ref} {
		out, err := git(ctx, repo, "rev-parse", "--verify", "--quiet", cand+"^{commit}")
		if err == nil {
			return strings.TrimSpace(string(out)), nil
		}
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			return "", err
		}
	}
	return "", fmt.Errorf("remote ref %s does not exist", ref)
}

func git(ctx context.Context, repo string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", repo}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("git %s: %w: %s", args[0], err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// extractTree writes the tree of commit into dir unless it is there
// already. Trees are keyed by commit and renamed into place whole, so
// concurrent compilations never see half a tree.
func extractTree(ctx context.Context, repo, commit, dir string) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, ".tmp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	cmd := exec.CommandContext(ctx, "git", "-C", repo, "archive", "--format=tar", commit)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("git archive: %w", err)
	}
	uerr := untar(out, tmp)
	_, _ = io.Copy(io.Discard, out)
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("git archive: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	if uerr != nil {
		return uerr
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, serr := os.Stat(dir); serr == nil {
			return nil // another compilation won the race
		}
		return err
	}
	removeStale(parent, filepath.Base(dir))
	return nil
}

// removeStale drops the trees of older commits of a remote.
func removeStale(parent, keep string) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		if e.Name() != keep && !strings.HasPrefix(e.Name(), ".tmp-") {
			_ = os.RemoveAll(filepath.Join(parent, e.Name()))
		}
	}
}

// untar extracts a git archive stream into dir. Writes go through an
// os.Root, so no entry (or symlink it follows) lands outside dir.
func untar(r io.Reader, dir string) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read git archive: %w", err)
		}
		if h.Typeflag == tar.TypeXGlobalHeader {
			continue
		}
		name := strings.TrimSuffix(h.Name, "/")
		if !filepath.IsLocal(name) {
			return fmt.Errorf("read git archive: unsafe path %q", h.Name)
		}
		if err := writeEntry(root, tr, h, filepath.FromSlash(name)); err != nil {
			return fmt.Errorf("extract %s: %w", name, err)
		}
	}
}

func writeEntry(root *os.Root, tr *tar.Reader, h *tar.Header, name string) error {
	switch h.Typeflag {
	case tar.TypeDir:
		return root.MkdirAll(name, 0o700)
	case tar.TypeSymlink:
		return root.Symlink(h.Linkname, name)
	case tar.TypeReg:
		if err := root.MkdirAll(filepath.Dir(name), 0o700); err != nil {
			return err
		}
		f, err := root.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode)&0o700|0o600)
		if err != nil {
			return err
		}
		_, err = io.Copy(f, tr)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}
	return nil
}

// linkMountpoint makes link/<mountpoint> a symlink to root
// (GitPillar.link_mountpoint).
func linkMountpoint(link, mountpoint, root string) error {
	p := filepath.Join(link, filepath.FromSlash(mountpoint))
	if dest, err := os.Readlink(p); err == nil && dest == root {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	_ = os.Remove(p)
	if err := os.Symlink(root, p); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	return nil
}

// compileGitDirs compiles each checked-out remote as its own pillar and
// merges the results (git_pillar.ext_pillar).
func compileGitDirs(ctx context.Context, x *ExtCall, dirs []gitDir) (*ordered.Map, error) {
	ret := ordered.New()
	pillarenv := optStr(x.Opts, "pillarenv", "")
	includes := true
	if v, ok := x.Opts.Get("git_pillar_includes"); ok {
		includes = truthy(v)
	}
	strategy := Strategy{Name: optStr(x.Opts, "pillar_source_merging_strategy", "smart"), Renderer: "yaml",
		MergeLists: truthy(x.Opts.Value("pillar_merge_lists")), Log: x.Log}
	for _, d := range dirs {
		env := d.env
		if env == "__env__" {
			env = firstNonEmpty(pillarenv, optStr(x.Opts, "saltenv", ""), optStr(x.Opts, "git_pillar_base", "master"))
		}
		if (pillarenv != "" && env != pillarenv) || d.linked {
			continue
		}
		roots := []string{d.dir}
		if includes {
			for _, o := range dirs {
				if o.env == d.env && o.dir != d.dir {
					roots = append(roots, o.dir)
				}
			}
		}
		p, err := x.Compiler.sub(fileclient.New(map[string][]string{env: roots}, nil)).Compile(ctx)
		if err != nil {
			return nil, fmt.Errorf("compile git_pillar %s: %w", d.dir, err)
		}
		ret = strategy.Merge(ret, p)
	}
	return ret, nil
}

// sub is a compilation of other roots for the same minion, without
// external pillars or the override (Pillar(...).compile_pillar(ext=False)).
func (c *Compiler) sub(files *fileclient.Client) *Compiler {
	s := &Compiler{Files: files, Render: c.Render, Match: c.Match, Saltenv: c.Saltenv, Log: c.Log,
		Opts: c.Opts, MinionID: c.MinionID, Ext: c.Ext, RenderFor: c.RenderFor, noExt: true}
	if c.RenderFor != nil {
		s.Render = c.RenderFor(files)
	}
	return s
}
