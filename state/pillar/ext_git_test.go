package pillar

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/testsupport/testhosts"
	"github.com/brinesalt/brine/state/compile"
	"github.com/brinesalt/brine/state/fileclient"
)

// gitRepo makes a repository in a temp dir; each commit writes files on
// a branch (created from master when new).
type gitRepo struct {
	t   *testing.T
	dir string
}

func newGitRepo(t *testing.T) *gitRepo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		testhosts.Skip(t, "git not installed")
	}
	r := &gitRepo{t: t, dir: t.TempDir()}
	r.run("init", "-q", "-b", "master")
	return r
}

func (r *gitRepo) run(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", append([]string{"-C", r.dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1", "HOME="+r.dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func (r *gitRepo) commit(branch string, files map[string]string) {
	r.t.Helper()
	if cur := r.run("symbolic-ref", "--short", "HEAD"); cur != branch {
		if strings.Contains(r.run("branch", "--list", branch), branch) {
			r.run("checkout", "-q", branch)
		} else {
			r.run("checkout", "-q", "-b", branch)
		}
	}
	for name, data := range files {
		p := filepath.Join(r.dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			r.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
	r.run("add", "-A")
	r.run("commit", "-q", "-m", "c")
}

func gitCompile(t *testing.T, opts string, cachedir string) string {
	t.Helper()
	o := loadYAML(t, opts, "opts")
	o.Set("cachedir", cachedir)
	local := filepath.Join(t.TempDir(), "base")
	if err := os.MkdirAll(local, 0o755); err != nil {
		t.Fatal(err)
	}
	c := &Compiler{Files: fileclient.New(map[string][]string{"base": {local}}, nil), Render: yamlRender,
		Match: func(tgt any, _ string) (bool, error) { return compile.Fnmatch("minion", ordered.KeyString(tgt)), nil },
		Opts:  o, MinionID: "minion"}
	if pe, ok := o.Value("pillarenv").(string); ok {
		c.Saltenv = pe
	}
	p, err := c.Compile(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestGitPillar(t *testing.T) {
	repo := newGitRepo(t)
	repo.commit("master", map[string]string{
		"top.sls":        "base:\n  '*':\n    - common\n",
		"common.sls":     "include:\n  - shared\nsrc: master\nm: {a: 1}\n",
		"shared.sls":     "shared: from-master\n",
		"sub/top.sls":    "base:\n  '*':\n    - inroot\n",
		"sub/inroot.sls": "inroot: true\n",
	})
	repo.commit("dev", map[string]string{
		"top.sls":     "dev:\n  '*':\n    - devfile\n",
		"devfile.sls": "src: dev\n",
	})
	repo.run("tag", "v1", "master")
	other := newGitRepo(t)
	other.commit("master", map[string]string{
		"top.sls":   "base:\n  '*':\n    - other\n",
		"other.sls": "include:\n  - shared\nm: {b: 2}\n",
	})
	bare := filepath.Join(t.TempDir(), "pillar.git")
	repo.run("clone", "-q", "--bare", repo.dir, bare)
	cache := t.TempDir()
	tests := []struct {
		name, opts, want string
	}{{
		name: "a bare repository",
		opts: "ext_pillar:\n  - git:\n    - dev file://" + bare + "\n",
		want: `{"src":"dev"}`,
	}, {
		name: "master is base; the local top file and includes are read from the tree",
		opts: "ext_pillar:\n  - git:\n    - master " + repo.dir + "\n",
		want: `{"shared":"from-master","src":"master","m":{"a":1}}`,
	}, {
		name: "file:// URL, a tag, per-remote root",
		opts: "ext_pillar:\n  - git:\n    - v1 file://" + repo.dir + ":\n      - env: base\n      - root: sub\n",
		want: `{"inroot":true}`,
	}, {
		name: "a branch is its own env; pillarenv keeps only that env",
		opts: "pillarenv: dev\next_pillar:\n  - git:\n    - master " + repo.dir + "\n    - dev " + repo.dir + "\n",
		want: `{"src":"dev"}`,
	}, {
		name: "remotes merge in order; git_pillar_includes lets one include another's files",
		opts: "ext_pillar:\n  - git:\n    - master " + repo.dir + "\n    - master " + other.dir + "\n",
		want: `{"shared":"from-master","src":"master","m":{"a":1,"b":2}}`,
	}, {
		name: "without git_pillar_includes the include is missing",
		opts: "git_pillar_includes: false\next_pillar:\n  - git:\n    - master " + other.dir + "\n",
		want: `{"m":{"b":2},"_errors":["Specified SLS 'shared' in environment 'base' is not available on the salt master"]}`,
	}, {
		name: "a missing branch or root is skipped",
		opts: "ext_pillar:\n  - git:\n    - nope " + repo.dir + "\n    - master " + repo.dir + ":\n      - root: missing\n",
		want: `{}`,
	}, {
		name: "__env__ follows pillarenv",
		opts: "pillarenv: dev\next_pillar:\n  - git:\n    - __env__ " + repo.dir + "\n",
		want: `{"src":"dev"}`,
	}, {
		name: "remote URLs are refused, not fetched",
		opts: "ext_pillar:\n  - git:\n    - master https://example.com/pillar.git\n",
		want: `{"_errors":["Failed to load ext_pillar git: git_pillar remote 'master https://example.com/pillar.git' is not a local repository: ` +
			`Brine reads local paths and file:// URLs only, and never fetches"]}`,
	}, {
		name: "bad per-remote parameter",
		opts: "ext_pillar:\n  - git:\n    - master " + repo.dir + ":\n      - bogus: 1\n",
		want: `{"_errors":["Failed to load ext_pillar git: Failed to load git_pillar"]}`,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := gitCompile(t, tc.opts, cache); got != tc.want {
				t.Errorf("pillar =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestGitPillarFollowsNewCommits(t *testing.T) {
	repo := newGitRepo(t)
	repo.commit("master", map[string]string{"top.sls": "base:\n  '*':\n    - a\n", "a.sls": "v: 1\n"})
	cache := t.TempDir()
	opts := "ext_pillar:\n  - git:\n    - master " + repo.dir + "\n"
	if got := gitCompile(t, opts, cache); got != `{"v":1}` {
		t.Fatalf("first compile = %s", got)
	}
	repo.commit("master", map[string]string{"a.sls": "v: 2\n"})
	if got := gitCompile(t, opts, cache); got != `{"v":2}` {
		t.Fatalf("after a new commit = %s", got)
	}
	dirs, _ := filepath.Glob(filepath.Join(cache, "git_pillar", "*", "*"))
	if len(dirs) != 1 {
		t.Errorf("trees kept = %v, want only the current commit", dirs)
	}
}
