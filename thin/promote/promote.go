// Package promote is the host side of minion.bootstrap: the functions the
// controller calls through the thin binary to turn an agentless host into
// a persistent minion (Salt's pre-seed procedure, done over the SSH
// channel). minion_bootstrap.key reports the host's minion public key;
// minion_bootstrap.install places the thin binary as salt-minion, the
// minion config, the key pair and the pinned master key, installs a
// systemd unit or a SysV init script and (re)starts the minion when
// anything changed or it is not running. Every step is idempotent. With
// repo= it installs the salt-minion package from a Brine repository
// instead of the thin binary and runs the package's service
// (packages.go).
//
// The private key arrives as a keyword argument of the job, which travels
// on the SSH session's stdin: never in argv, never logged, written 0600.
// The package links no transport (thin/deps_test.go).
package promote

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
)

// Paths of a promoted minion, Salt's defaults (salt/syspaths.py) with
// the binary where locally installed daemons go.
const (
	ConfigDir  = "/etc/salt"
	PKIDir     = "/etc/salt/pki/minion"
	DefaultBin = "/usr/local/sbin/salt-minion"
)

func init() {
	opt := func(name string) modules.Param { return modules.Param{Name: name, Optional: true} }
	modules.Register(modules.Function{Name: "minion_bootstrap.key",
		Doc: "Return the host's minion public key (pki_dir/minion.pub) when it has a key pair, else \"\".",
		Fn:  func(context.Context, *modules.Call) (any, error) { return hostKey(PKIDir) }})
	modules.Register(modules.Function{Name: "minion_bootstrap.install",
		Doc: "Install this binary as salt-minion with its config, keys and init script, and (re)start it. Used by minion.bootstrap.",
		Spec: modules.Spec{Params: []modules.Param{{Name: "config"}, {Name: "pub"}, {Name: "master_pub"},
			opt("pem"), opt("bin"), opt("init"), opt("repo")}},
		Fn: install})
}

// hostKey returns the public key of the host's key pair, or "" when the
// pair is incomplete.
func hostKey(dir string) (string, error) {
	if _, err := os.Stat(filepath.Join(dir, "minion.pem")); errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	b, err := os.ReadFile(filepath.Join(dir, "minion.pub"))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read minion key: %w", err)
	}
	return string(b), nil
}

// Step is one part of the installation, reported in a state's shape.
type Step struct {
	ID      string
	Name    string
	Result  bool
	Comment string
	Changes *ordered.Map
}

func (s Step) toMap() *ordered.Map {
	ch := s.Changes
	if ch == nil {
		ch = ordered.New()
	}
	return ordered.FromPairs("id", s.ID, "name", s.Name, "result", s.Result, "comment", s.Comment, "changes", ch)
}

// layout is where an installation goes; tests point it at a temporary
// root.
type layout struct {
	Root string // prefix for every path; "" on a real host
	Bin  string
	Init string // "systemd" or "sysv"
	// Repo, when set, is a Brine package repository: the minion is the
	// salt-minion package installed from it (see packages.go).
	Repo string
}

func (l layout) path(p string) string { return filepath.Join(l.Root, p) }

func install(ctx context.Context, c *modules.Call) (any, error) {
	l := layout{Bin: c.Str("bin"), Init: c.Str("init"), Repo: c.Str("repo")}
	if l.Repo != "" && l.Bin != "" {
		return nil, modules.Errorf("bin= and repo= exclude each other: a packaged minion is %s", packageBin)
	}
	if l.Repo != "" {
		l.Bin = packageBin
	}
	if l.Bin == "" {
		l.Bin = DefaultBin
	}
	if l.Init == "" || l.Init == "auto" {
		l.Init = detectInit("")
	}
	if l.Init != "systemd" && l.Init != "sysv" {
		return nil, modules.Errorf("init %q: want auto, systemd or sysv", l.Init)
	}
	self, err := os.Executable()
	if err != nil {
		return nil, modules.Errorf("find this binary: %w", err)
	}
	in := input{Self: self, Config: c.Str("config"), Pub: c.Str("pub"), MasterPub: c.Str("master_pub"), PEM: c.Str("pem")}
	steps := run(ctx, l, in)
	out := make([]any, len(steps))
	for i, s := range steps {
		out[i] = s.toMap()
	}
	return out, nil
}

// input is what the controller sends.
type input struct {
	Self      string // the running thin binary
	Config    string // /etc/salt/minion
	Pub       string // the accepted public key
	MasterPub string
	PEM       string // the private key; "" keeps the host's own pair
}

// run performs the steps in order; after a failed step the rest are
// skipped (a minion with a half-written setup is never started). In
// package mode the package comes first, replacing a thin-binary minion
// an earlier run installed.
func run(ctx context.Context, l layout, in input) []Step {
	var steps []Step
	pkgChanged := false
	if l.Repo != "" {
		steps = retireThinMinion(ctx, l)
		if len(steps) > 0 && !steps[0].Result {
			return steps
		}
		ps, ch, ok := installPackage(ctx, l)
		if steps = append(steps, ps...); !ok {
			return steps
		}
		pkgChanged = ch
	}
	fs, changed, ok := installFiles(l, in)
	if steps = append(steps, fs...); !ok {
		return steps
	}
	return append(steps, service(ctx, l, changed || pkgChanged)...)
}

// installFiles places the binary, the config and the keys; changed
// reports that any of them changed, ok that all steps succeeded.
func installFiles(l layout, in input) (steps []Step, changed, ok bool) {
	files := []struct {
		id, path string
		data     string
		mode     fs.FileMode
		secret   bool
	}{
		{"binary", l.Bin, "", 0o755, false},
		{"config", ConfigDir + "/minion", in.Config, 0o644, false},
		{"private key", PKIDir + "/minion.pem", in.PEM, 0o600, true},
		{"public key", PKIDir + "/minion.pub", in.Pub, 0o644, false},
		{"master key", PKIDir + "/minion_master.pub", in.MasterPub, 0o644, false},
	}
	if l.Repo != "" {
		// The package brings the binary; the settings go in a drop-in.
		files[1].path = DropIn
		files = files[1:]
	}
	for _, f := range files {
		s := Step{ID: f.id, Name: f.path}
		var ch bool
		var err error
		switch {
		case f.id == "binary":
			ch, err = copyFile(in.Self, l.path(f.path), f.mode)
		case f.id == "private key" && f.data == "":
			ch, err = false, requireFile(l.path(f.path))
		default:
			ch, err = writeFile(l.path(f.path), []byte(f.data), f.mode)
		}
		s.Result, s.Comment = err == nil, describe(f.path, ch, err)
		if ch {
			changed = true
			diff := "updated"
			if f.secret {
				diff = "written (content not shown)"
			}
			s.Changes = ordered.FromPairs(f.path, diff)
		}
		steps = append(steps, s)
		if err != nil {
			return steps, changed, false
		}
	}
	return steps, changed, true
}

func describe(path string, changed bool, err error) string {
	switch {
	case err != nil:
		return err.Error()
	case changed:
		return path + " updated"
	}
	return path + " is in the correct state"
}

func requireFile(p string) error {
	if _, err := os.Stat(p); err != nil {
		return fmt.Errorf("keep the host's key pair: %w", err)
	}
	return nil
}
