package promote

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestWriteFileIdempotentAndAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "pki", "minion.pem")
	for i, tc := range []struct {
		data    string
		mode    os.FileMode
		changed bool
	}{
		{"secret-1", 0o600, true},
		{"secret-1", 0o600, false},
		{"secret-2", 0o600, true},
		{"secret-2", 0o644, true}, // only the mode differs
		{"secret-2", 0o644, false},
	} {
		ch, err := writeFile(p, []byte(tc.data), tc.mode)
		if err != nil || ch != tc.changed {
			t.Fatalf("step %d: changed %v err %v, want changed %v", i, ch, err, tc.changed)
		}
		b, _ := os.ReadFile(p)
		st, _ := os.Stat(p)
		if string(b) != tc.data || st.Mode().Perm() != tc.mode {
			t.Fatalf("step %d: %q %v", i, b, st.Mode())
		}
	}
	// A key's directory is created private; no temporary file is left.
	if st, _ := os.Stat(filepath.Dir(p)); st.Mode().Perm() != 0o700 {
		t.Errorf("pki dir mode %v", st.Mode().Perm())
	}
	ents, _ := os.ReadDir(filepath.Dir(p))
	if len(ents) != 1 {
		t.Errorf("left behind: %v", ents)
	}
}

func TestWriteFileReportsErrors(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	os.WriteFile(blocker, nil, 0o644)
	if _, err := writeFile(filepath.Join(blocker, "minion"), []byte("x"), 0o644); err == nil || !strings.Contains(err.Error(), blocker) {
		t.Errorf("write under a file: %v", err)
	}
}

func TestInstallFiles(t *testing.T) {
	root := t.TempDir()
	self := filepath.Join(root, "thin")
	os.WriteFile(self, []byte("binary v1"), 0o700)
	l := layout{Root: root, Bin: DefaultBin, Init: "sysv"}
	in := input{Self: self, Config: "master: 10.0.0.1\nid: web1\n", Pub: "PUB", MasterPub: "MPUB", PEM: "PEM"}

	steps, changed, ok := installFiles(l, in)
	if !ok || !changed || len(steps) != 5 {
		t.Fatalf("first install: ok %v changed %v %+v", ok, changed, steps)
	}
	for _, f := range []struct {
		path, want string
		mode       os.FileMode
	}{
		{DefaultBin, "binary v1", 0o755},
		{"/etc/salt/minion", in.Config, 0o644},
		{"/etc/salt/pki/minion/minion.pem", "PEM", 0o600},
		{"/etc/salt/pki/minion/minion.pub", "PUB", 0o644},
		{"/etc/salt/pki/minion/minion_master.pub", "MPUB", 0o644},
	} {
		b, err := os.ReadFile(l.path(f.path))
		st, _ := os.Stat(l.path(f.path))
		if err != nil || string(b) != f.want || st.Mode().Perm() != f.mode {
			t.Errorf("%s: %q %v %v", f.path, b, err, st)
		}
	}
	if c := steps[2].Changes.Value("/etc/salt/pki/minion/minion.pem"); c != "written (content not shown)" {
		t.Errorf("the private key step shows %v", c)
	}

	// Again, keeping the host's key: nothing changes.
	in.PEM = ""
	steps, changed, ok = installFiles(l, in)
	if !ok || changed {
		t.Fatalf("re-run: ok %v changed %v %+v", ok, changed, steps)
	}
	// A new binary is replaced; a missing key pair cannot be kept.
	os.WriteFile(self, []byte("binary v2"), 0o700)
	os.Remove(l.path("/etc/salt/pki/minion/minion.pem"))
	steps, changed, ok = installFiles(l, in)
	if ok || !changed || len(steps) != 3 || steps[2].Result || !strings.Contains(steps[2].Comment, "minion.pem") {
		t.Fatalf("missing key: ok %v changed %v %+v", ok, changed, steps)
	}
	if b, _ := os.ReadFile(l.path(DefaultBin)); string(b) != "binary v2" {
		t.Errorf("binary not replaced: %q", b)
	}
}

func TestHostKey(t *testing.T) {
	dir := t.TempDir()
	if k, err := hostKey(dir); k != "" || err != nil {
		t.Fatalf("no pair: %q %v", k, err)
	}
	os.WriteFile(filepath.Join(dir, "minion.pub"), []byte("PUB\n"), 0o644)
	if k, _ := hostKey(dir); k != "" {
		t.Fatalf("a public key without its private key counts as no pair: %q", k)
	}
	os.WriteFile(filepath.Join(dir, "minion.pem"), []byte("PEM\n"), 0o600)
	if k, _ := hostKey(dir); k != "PUB\n" {
		t.Fatalf("pair: %q", k)
	}
}

// TestSysVScript runs the init script for real on a stand-in daemon.
func TestSysVScript(t *testing.T) {
	dir := t.TempDir()
	daemon := filepath.Join(dir, "salt-minion")
	os.WriteFile(daemon, []byte("#!/bin/sh\necho started \"$@\"\nwhile :; do sleep 1; done\n"), 0o755)
	script := filepath.Join(dir, "init")
	pid, log := filepath.Join(dir, "run", "salt-minion.pid"), filepath.Join(dir, "log", "minion")
	os.WriteFile(script, []byte(sysvScript(daemon, pid, log)), 0o755)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sh := func(arg string) error { return exec.CommandContext(ctx, script, arg).Run() }
	t.Cleanup(func() { sh("stop") })

	if sh("status") == nil {
		t.Fatal("status before start says running")
	}
	if err := sh("start"); err != nil {
		t.Fatalf("start: %v", err)
	}
	first, _ := os.ReadFile(pid)
	if sh("status") != nil || sh("start") != nil {
		t.Fatal("not running after start, or a second start failed")
	}
	if again, _ := os.ReadFile(pid); string(again) != string(first) {
		t.Errorf("a second start started another daemon: %s then %s", first, again)
	}
	if err := sh("restart"); err != nil {
		t.Fatalf("restart: %v", err)
	}
	if again, _ := os.ReadFile(pid); string(again) == string(first) {
		t.Error("restart kept the old process")
	}
	if err := sh("stop"); err != nil || sh("status") == nil {
		t.Fatalf("stop: %v, or still running", err)
	}
	if b, _ := os.ReadFile(log); !strings.Contains(string(b), "started -c /etc/salt -l info") {
		t.Errorf("daemon log: %q", b)
	}
	if err := exec.CommandContext(ctx, script, "bogus").Run(); err == nil {
		t.Error("an unknown action succeeded")
	}
}

// TestSystemdCtl drives systemdCtl against a stand-in systemctl on PATH
// that records its calls; is-enabled and is-active answer from files.
func TestSystemdCtl(t *testing.T) {
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	os.WriteFile(filepath.Join(dir, "systemctl"), []byte(`#!/bin/sh
echo "$*" >>`+calls+`
case "$1" in
is-enabled) test -e `+dir+`/enabled ;;
is-active) test -e `+dir+`/active ;;
enable) touch `+dir+`/enabled ;;
restart) touch `+dir+`/active ;;
esac
`), 0o755)
	t.Setenv("PATH", dir+":"+os.Getenv("PATH"))
	ctx := context.Background()
	for _, tc := range []struct {
		name             string
		fileChanged, rst bool
		want             string
		changed          []string
	}{
		{"first install", true, true,
			"daemon-reload\nis-enabled --quiet salt-minion\nenable salt-minion\nis-active --quiet salt-minion\nrestart salt-minion\n",
			[]string{"daemon-reload", "enabled", "running"}},
		{"nothing changed", false, false,
			"is-enabled --quiet salt-minion\nis-active --quiet salt-minion\n", nil},
		{"config changed", false, true,
			"is-enabled --quiet salt-minion\nis-active --quiet salt-minion\nrestart salt-minion\n", []string{"running"}},
	} {
		os.Remove(calls)
		steps := systemdCtl(ctx, tc.fileChanged, tc.rst)
		got, _ := os.ReadFile(calls)
		if string(got) != tc.want {
			t.Errorf("%s: calls\n%s\nwant\n%s", tc.name, got, tc.want)
		}
		var changed []string
		for _, s := range steps {
			if !s.Result {
				t.Errorf("%s: step %s failed: %s", tc.name, s.ID, s.Comment)
			}
			if s.Changes != nil {
				changed = append(changed, s.ID)
			}
		}
		if strings.Join(changed, ",") != strings.Join(tc.changed, ",") {
			t.Errorf("%s: changed steps %v, want %v", tc.name, changed, tc.changed)
		}
	}
}

// TestInstallFilesPackageMode checks that with a repository the settings
// go to the minion.d drop-in and no binary is placed: the package brings
// /usr/bin/salt-minion and its /etc/salt/minion stays as shipped.
func TestInstallFilesPackageMode(t *testing.T) {
	root := t.TempDir()
	l := layout{Root: root, Bin: packageBin, Init: "sysv", Repo: "http://repo.invalid"}
	in := input{Config: "master: 10.0.0.1\nid: web1\n", Pub: "PUB", MasterPub: "MPUB", PEM: "PEM"}
	steps, changed, ok := installFiles(l, in)
	if !ok || !changed || len(steps) != 4 {
		t.Fatalf("ok %v changed %v %+v", ok, changed, steps)
	}
	if b, err := os.ReadFile(l.path(DropIn)); err != nil || string(b) != in.Config {
		t.Errorf("drop-in: %q %v", b, err)
	}
	for _, p := range []string{"/etc/salt/minion", packageBin, DefaultBin} {
		if _, err := os.Stat(l.path(p)); !os.IsNotExist(err) {
			t.Errorf("%s written in package mode: %v", p, err)
		}
	}
}
