package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/testsupport/testhosts"
)

// The package tests share one build: the real commands and thin binaries
// for this machine's architecture, packed as two versions (an "old" and
// a "new" one, for upgrades and downgrades) of every package whose
// commands are on this tree. The old one is an untagged tree's version,
// which sorts below every release.
const (
	oldVersion = "0~git1.g0000001"
	newVersion = "0.2.0"
)

var (
	oldTime = time.Unix(1767225600, 0).UTC() // 2026-01-01
	newTime = time.Unix(1769904000, 0).UTC() // 2026-02-01
)

type fixture struct {
	Root     string // the module root
	Src      string // packaging/
	Bin      string
	Old, New string // the two builds: Old/deb, Old/rpm, ...
	Packages []string
}

var (
	fixOnce sync.Once
	fix     fixture
	fixErr  error
	fixDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if fixDir != "" {
		os.RemoveAll(fixDir)
	}
	os.Exit(code)
}

// packages builds (once per test binary) and returns the fixture.
func packages(t *testing.T) fixture {
	t.Helper()
	fixOnce.Do(func() { fixErr = buildFixture(t.Context()) })
	if fixErr != nil {
		t.Fatalf("build the test packages: %v", fixErr)
	}
	return fix
}

func buildFixture(ctx context.Context) error {
	ctx = context.WithoutCancel(ctx)
	root, err := filepath.Abs("../../..")
	if err != nil {
		return err
	}
	if fixDir, err = os.MkdirTemp("", "pkgtool-test-"); err != nil {
		return err
	}
	fix = fixture{Root: root, Src: filepath.Join(root, "packaging"), Bin: filepath.Join(fixDir, "bin"),
		Old: filepath.Join(fixDir, "old"), New: filepath.Join(fixDir, "new")}
	if err := buildBinaries(ctx, root, fix.Bin); err != nil {
		return err
	}
	fix.Packages = onTree(root)
	for _, b := range []struct {
		dir, version string
		at           time.Time
	}{{fix.Old, oldVersion, oldTime}, {fix.New, newVersion, newTime}} {
		o := buildOptions{in: Inputs{Src: fix.Src, Bin: fix.Bin, Version: b.version}, out: b.dir,
			archs: runtime.GOARCH, thinArchs: runtime.GOARCH, packages: strings.Join(fix.Packages, " "),
			formats: "deb rpm", epoch: b.at.Unix()}
		if _, err := buildAll(ctx, o); err != nil {
			return err
		}
	}
	return nil
}

// onTree lists the specs whose commands all exist under cmd/.
func onTree(root string) []string {
	var out []string
	for _, s := range Specs {
		ok := true
		for _, f := range Families {
			for _, c := range s.CommandsFor(f) {
				if _, err := os.Stat(filepath.Join(root, "cmd", c)); err != nil {
					ok = false
				}
			}
		}
		if ok {
			out = append(out, s.Name)
		}
	}
	return out
}

// buildBinaries builds every command as the Makefile's cross target
// does, and the thin binaries, for this architecture.
func buildBinaries(ctx context.Context, root, bin string) error {
	lc := exec.CommandContext(ctx, "go", "list", "./cmd/...")
	lc.Dir = root
	list, err := lc.Output()
	if err != nil {
		return fmt.Errorf("go list: %w", err)
	}
	var cmds []string
	for _, p := range strings.Fields(string(list)) {
		if !strings.Contains(p, "/salt-thin") {
			cmds = append(cmds, p)
		}
	}
	dir := filepath.Join(bin, "linux-"+runtime.GOARCH)
	steps := [][]string{append([]string{"build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w", "-o", dir + "/"}, cmds...)}
	for _, flavor := range []string{"salt-thin", "salt-thin-core"} {
		steps = append(steps, []string{"build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w",
			"-o", filepath.Join(bin, flavor+"-linux-"+runtime.GOARCH), "./cmd/" + flavor})
	}
	for _, args := range steps {
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, out)
		}
	}
	return nil
}

// pkgFile returns the one package file of build dir matching name (the
// package name) in family f.
func pkgFile(t *testing.T, dir string, f Family, name string) string {
	t.Helper()
	pat := name + "_*.deb"
	if f == RPM {
		pat = name + "-[0-9]*.rpm"
	}
	m, _ := filepath.Glob(filepath.Join(dir, string(f), pat))
	if len(m) != 1 {
		t.Fatalf("%s %s in %s: found %v", f, name, dir, m)
	}
	return m[0]
}

// need skips t through the harness when tool is missing.
func need(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			testhosts.Skip(t, "no "+tool+" (run scripts/install-deps.sh)")
		}
	}
}

func runCmd(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}
