package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/goreleaser/nfpm/v2"
)

// debArch and rpmArch are this machine's architecture in each family's
// words.
var (
	debArch = runtime.GOARCH
	rpmArch = map[string]string{"amd64": "x86_64", "arm64": "aarch64"}[runtime.GOARCH]
)

// debFiles lists a .deb's entries as dpkg-deb -c shows them: path →
// "mode owner[ -> target]".
func debFiles(t *testing.T, deb string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(runCmd(t, "dpkg-deb", "-c", deb)), "\n") {
		f := strings.Fields(l)
		if len(f) < 6 {
			t.Fatalf("dpkg-deb -c line %q", l)
		}
		path := strings.TrimSuffix(strings.TrimPrefix(f[5], "."), "/")
		v := f[0] + " " + f[1]
		if len(f) == 8 && f[6] == "->" {
			v += " -> " + f[7]
		}
		out[path] = v
	}
	return out
}

// rpmFiles lists an .rpm's files as rpm -qp shows them: path → "mode
// owner:group flags[ -> target]".
func rpmFiles(t *testing.T, rpm string) map[string]string {
	t.Helper()
	q := `[%{FILEMODES:perms} %{FILEUSERNAME}:%{FILEGROUPNAME} %{FILEFLAGS:fflags}| %{FILENAMES}|%{FILELINKTOS}\n]`
	out := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(runCmd(t, "rpm", "-qp", "--qf", q, rpm)), "\n") {
		head, rest, _ := strings.Cut(l, "| ")
		path, target, _ := strings.Cut(rest, "|")
		v := strings.TrimSpace(head)
		if target != "" {
			v += " -> " + target
		}
		out[path] = v
	}
	return out
}

// TestDebPackages inspects the .debs with dpkg-deb: control fields,
// files with their modes and owners, conffiles and maintainer scripts.
func TestDebPackages(t *testing.T) {
	need(t, "dpkg-deb")
	fx := packages(t)
	v := Epoch + ":" + oldVersion
	fields := map[string]map[string]string{
		"salt-common": {"Version": v, "Architecture": debArch, "Pre-Depends": "passwd",
			"Provides": "brine-salt-common (= " + v + ")"},
		"salt-master": {"Depends": "salt-common (= " + v + "), init-system-helpers, libpam0g",
			"Replaces": "salt-common (<< 1:0~)", "Breaks": "salt-common (<< 1:0~), salt-cloud (<< 1:0~)"},
		"salt-minion": {"Depends": "salt-common (= " + v + "), init-system-helpers", "Replaces": "salt-common (<< 1:0~)"},
		"salt-ssh":    {"Depends": "salt-common (= " + v + "), openssh-client"},
	}
	files := map[string]map[string]string{
		"salt-common": {
			"/etc/salt": "drwxr-xr-x root/root", "/etc/salt/pki": "drwxr-xr-x root/root",
			"/var/log/salt": "drwxr-xr-x root/root", "/var/cache/salt": "drwxr-xr-x root/root",
			"/opt/saltstack/salt/salt-call":                       "-rwxr-xr-x root/root",
			"/usr/bin/salt-call":                                  "lrwxrwxrwx root/root -> /opt/saltstack/salt/salt-call",
			"/opt/saltstack/salt/salt-thin-linux-" + debArch:      "-rwxr-xr-x root/root",
			"/opt/saltstack/salt/salt-thin-core-linux-" + debArch: "-rwxr-xr-x root/root",
			"/etc/logrotate.d/salt-common":                        "-rw-r--r-- root/root",
		},
		"salt-master": {
			"/etc/salt/master": "-rw-r--r-- root/root", "/etc/salt/master.d": "drwxr-xr-x root/root",
			"/etc/salt/pki/master": "drwxr-x--- root/root", "/etc/salt/pki/master/minions_pre": "drwxr-x--- root/root",
			"/var/cache/salt/master/jobs": "drwxr-x--- root/root", "/var/run/salt/master": "drwxr-x--- root/root",
			"/lib/systemd/system/salt-master.service": "-rw-r--r-- root/root",
			"/etc/init.d/salt-master":                 "-rwxr-xr-x root/root",
			"/usr/bin/salt-key":                       "lrwxrwxrwx root/root -> /opt/saltstack/salt/salt-key",
			"/usr/bin/salt":                           "lrwxrwxrwx root/root -> /opt/saltstack/salt/salt",
		},
		"salt-minion": {
			"/etc/salt/minion": "-rw-r--r-- root/root", "/etc/salt/pki/minion": "drwx------ root/root",
			"/var/cache/salt/minion":                  "drwxr-x--- root/root",
			"/lib/systemd/system/salt-minion.service": "-rw-r--r-- root/root",
			"/etc/init.d/salt-minion":                 "-rwxr-xr-x root/root",
			"/usr/bin/salt-minion":                    "lrwxrwxrwx root/root -> /opt/saltstack/salt/salt-minion",
		},
		"salt-ssh": {"/etc/salt/roster": "-rw-r--r-- root/root",
			"/usr/bin/salt-ssh": "lrwxrwxrwx root/root -> /opt/saltstack/salt/salt-ssh"},
	}
	conffiles := map[string][]string{
		"salt-common": {"/etc/logrotate.d/salt-common"},
		"salt-master": {"/etc/init.d/salt-master", "/etc/salt/master"},
		"salt-minion": {"/etc/init.d/salt-minion", "/etc/salt/minion"},
		"salt-ssh":    {"/etc/salt/roster"},
	}
	scripts := map[string][]string{
		"salt-common": {"postrm", "preinst"}, "salt-master": {"postinst", "postrm", "prerm"},
		"salt-minion": {"postinst", "postrm", "prerm"}, "salt-ssh": nil,
	}
	for name, want := range fields {
		t.Run(name, func(t *testing.T) {
			deb := pkgFile(t, fx.Old, Deb, name)
			for field, val := range want {
				if got := strings.TrimSpace(runCmd(t, "dpkg-deb", "-f", deb, field)); got != val {
					t.Errorf("%s: %s = %q, want %q", name, field, got, val)
				}
			}
			got := debFiles(t, deb)
			for path, w := range files[name] {
				if got[path] != w {
					t.Errorf("%s: %s is %q, want %q", name, path, got[path], w)
				}
			}
			ctl := t.TempDir()
			runCmd(t, "dpkg-deb", "-e", deb, ctl)
			cf, _ := os.ReadFile(filepath.Join(ctl, "conffiles"))
			if d := cmp.Diff(conffiles[name], strings.Fields(string(cf))); d != "" {
				t.Errorf("%s conffiles (-want +got):\n%s", name, d)
			}
			checkScripts(t, ctl, scripts[name])
		})
	}
}

// checkScripts checks that dir holds exactly the maintainer scripts
// want, executable and valid sh.
func checkScripts(t *testing.T, dir string, want []string) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	var got []string
	for _, e := range ents {
		switch e.Name() {
		case "preinst", "postinst", "prerm", "postrm":
			got = append(got, e.Name())
			p := filepath.Join(dir, e.Name())
			if st, _ := os.Stat(p); st.Mode().Perm()&0o111 == 0 {
				t.Errorf("%s is not executable", e.Name())
			}
			runCmd(t, "sh", "-n", p)
		}
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("maintainer scripts (-want +got):\n%s", d)
	}
}

// rpmLink is how rpm lists the packages' symlinks: rpmpack records a
// link's mode without permission bits, which Linux ignores on links.
const rpmLink = "l--------- root:root -> "

// TestRPMPackages inspects the .rpms with rpm -qp: name, epoch,
// provides, requires, obsoletes, files with modes, owners and config
// flags, and the scriptlets.
func TestRPMPackages(t *testing.T) {
	need(t, "rpm")
	fx := packages(t)
	evr := Epoch + ":" + oldVersion + "-" + rpmRelease
	type want struct {
		requires, provides, obsoletes []string
		files                         map[string]string
		scriptlets                    []string
	}
	cases := map[string]want{
		"salt": {requires: []string{"/usr/sbin/groupadd", "/usr/sbin/useradd"},
			provides:  []string{"brine-salt-common = " + evr, "salt = " + evr},
			obsoletes: []string{"salt3 < 3006", "salt3006"},
			files: map[string]string{"/etc/logrotate.d/salt": "-rw-r--r-- root:root cn",
				"/opt/saltstack/salt/salt-thin-linux-" + debArch: "-rwxr-xr-x root:root",
				"/var/run/salt": "drwxr-xr-x root:root"},
			scriptlets: []string{"preinstall"}},
		"salt-master": {requires: []string{"salt = " + evr},
			provides:  []string{"brine-salt-master = " + evr, "salt-master = " + evr},
			obsoletes: []string{"salt-cloud < 1:0~", "salt3-master < 3006", "salt3006-master"},
			files: map[string]string{"/etc/salt/master": "-rw-r----- root:root cn",
				"/etc/salt/pki/master":                        "drwxr-x--- salt:salt",
				"/etc/salt/pki/master/minions":                "drwxr-x--- salt:salt",
				"/var/cache/salt/master/tokens":               "drwxr-x--- salt:salt",
				"/usr/lib/systemd/system/salt-master.service": "-rw-r--r-- root:root",
				"/etc/rc.d/init.d/salt-master":                "-rwxr-xr-x root:root",
				"/usr/bin/salt-run":                           rpmLink + "/opt/saltstack/salt/salt-run"},
			scriptlets: []string{"postinstall", "posttrans", "postuninstall", "preuninstall"}},
		"salt-minion": {requires: []string{"salt = " + evr},
			provides:  []string{"brine-salt-minion = " + evr, "salt-minion = " + evr},
			obsoletes: []string{"salt3-minion < 3006", "salt3006-minion"},
			files: map[string]string{"/etc/salt/minion": "-rw-r----- root:root cn",
				"/etc/salt/pki/minion":   "drwx------ root:root",
				"/usr/bin/salt-call":     rpmLink + "/opt/saltstack/salt/salt-call",
				"/var/cache/salt/minion": "drwxr-x--- root:root"},
			scriptlets: []string{"postinstall", "posttrans", "postuninstall", "preuninstall"}},
		"salt-ssh": {requires: []string{"openssh-clients", "salt = " + evr},
			provides:  []string{"brine-salt-ssh = " + evr, "salt-ssh = " + evr},
			obsoletes: []string{"salt3-ssh < 3006", "salt3006-ssh"},
			files:     map[string]string{"/etc/salt/roster": "-rw-r----- root:root cn"}},
	}
	for name, w := range cases {
		t.Run(name, func(t *testing.T) {
			rpm := pkgFile(t, fx.Old, RPM, name)
			if got := runCmd(t, "rpm", "-qp", "--qf", "%{NAME} %{EPOCH} %{VERSION} %{RELEASE} %{ARCH}", rpm); got != name+" "+Epoch+" "+oldVersion+" "+rpmRelease+" "+rpmArch {
				t.Errorf("NEVRA: %q", got)
			}
			checkDeps(t, rpm, "--requires", w.requires)
			checkDeps(t, rpm, "--provides", w.provides)
			checkDeps(t, rpm, "--obsoletes", w.obsoletes)
			got := rpmFiles(t, rpm)
			for path, wf := range w.files {
				if got[path] != wf {
					t.Errorf("%s: %s is %q, want %q", name, path, got[path], wf)
				}
			}
			scripts := runCmd(t, "rpm", "-qp", "--scripts", rpm)
			var have []string
			for _, l := range strings.Split(scripts, "\n") {
				if s, ok := strings.CutSuffix(l, " scriptlet (using /bin/sh):"); ok {
					have = append(have, s)
				}
			}
			slices.Sort(have)
			if d := cmp.Diff(w.scriptlets, have); d != "" {
				t.Errorf("scriptlets (-want +got):\n%s", d)
			}
		})
	}
}

// checkDeps checks that every line of want is among rpm -qp's answer to
// query (rpm adds rpmlib() and self-provides of its own).
func checkDeps(t *testing.T, rpm, query string, want []string) {
	t.Helper()
	got := strings.Split(strings.TrimSpace(runCmd(t, "rpm", "-qp", query, rpm)), "\n")
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("rpm %s: no %q in %q", query, w, got)
		}
	}
}

// TestReproducible builds the old version again and compares every
// package byte for byte.
func TestReproducible(t *testing.T) {
	fx := packages(t)
	again := t.TempDir()
	o := buildOptions{in: Inputs{Src: fx.Src, Bin: fx.Bin, Version: oldVersion}, out: again,
		archs: runtime.GOARCH, thinArchs: runtime.GOARCH, packages: strings.Join(fx.Packages, " "),
		formats: "deb rpm", epoch: oldTime.Unix()}
	paths, err := buildAll(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 2*len(fx.Packages) {
		t.Fatalf("built %d packages, want %d", len(paths), 2*len(fx.Packages))
	}
	for _, p := range paths {
		rel, _ := filepath.Rel(again, p)
		a, _ := os.ReadFile(p)
		b, err := os.ReadFile(filepath.Join(fx.Old, rel))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between two builds of the same inputs", rel)
		}
	}
}

// TestMissingBinary checks that a package whose command was not built
// fails by name, and that the others are still built.
func TestMissingBinary(t *testing.T) {
	fx := packages(t)
	bin := t.TempDir()
	dir := filepath.Join(bin, "linux-"+runtime.GOARCH)
	os.MkdirAll(dir, 0o755)
	for _, c := range []string{"salt-minion"} {
		b, _ := os.ReadFile(filepath.Join(fx.Bin, "linux-"+runtime.GOARCH, c))
		os.WriteFile(filepath.Join(dir, c), b, 0o755)
	}
	o := buildOptions{in: Inputs{Src: fx.Src, Bin: bin, Version: oldVersion}, out: t.TempDir(),
		archs: runtime.GOARCH, thinArchs: runtime.GOARCH, packages: "salt-minion salt-api",
		formats: "deb", epoch: oldTime.Unix()}
	paths, err := buildAll(t.Context(), o)
	if !errors.Is(err, ErrMissingBinary) {
		t.Fatalf("err = %v, want ErrMissingBinary", err)
	}
	if !strings.Contains(err.Error(), "salt-api: command salt-api for linux/"+runtime.GOARCH) ||
		!strings.Contains(err.Error(), "is cmd/salt-api on this tree?") {
		t.Errorf("error does not name the missing command: %v", err)
	}
	if len(paths) != 1 || !strings.Contains(paths[0], "salt-minion_") {
		t.Errorf("built %v, want the salt-minion package alone", paths)
	}
}

// TestScriptTemplates renders every maintainer script for every daemon
// in both families and checks it parses as sh.
func TestScriptTemplates(t *testing.T) {
	root, _ := filepath.Abs("../../..")
	work := t.TempDir()
	for _, s := range Specs {
		for _, f := range Families {
			info := &nfpm.Info{Name: s.PackageName(f)}
			if err := setScripts(Inputs{Src: filepath.Join(root, "packaging")}, Target{Spec: s, Family: f, Arch: "amd64"}, work, info); err != nil {
				t.Fatal(err)
			}
			for _, p := range []string{info.Scripts.PreInstall, info.Scripts.PostInstall, info.Scripts.PreRemove,
				info.Scripts.PostRemove, info.RPM.Scripts.PostTrans} {
				if p == "" {
					continue
				}
				if out, err := exec.Command("sh", "-n", p).CombinedOutput(); err != nil {
					t.Errorf("%s %s %s: %v\n%s", f, s.Name, filepath.Base(p), err, out)
				}
			}
		}
		if s.Daemon != nil {
			init, err := renderInit(filepath.Join(root, "packaging"), work, s)
			if err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command("sh", "-n", init).CombinedOutput(); err != nil {
				t.Errorf("init script of %s: %v\n%s", s.Name, err, out)
			}
		}
	}
}

// FuzzDebControl feeds DebControl arbitrary bytes: it returns a control
// file or an error, never panics; the seeds in testdata are real .debs
// (dpkg-deb, gzip and xz control members).
func FuzzDebControl(f *testing.F) {
	f.Add([]byte("!<arch>\n"))
	f.Add([]byte("!<arch>\ncontrol.tar.gz/ 0           0     0     644     99999999  `\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		control, err := DebControl(b)
		if err == nil && len(control) > maxControl {
			t.Errorf("read %d bytes of control, more than the %d bound", len(control), maxControl)
		}
	})
}

// TestDebControl reads the control file of the seed packages and of a
// built one.
func TestDebControl(t *testing.T) {
	for _, seed := range []string{"seed-gz", "seed-xz"} {
		b, err := os.ReadFile(filepath.Join("testdata", "fuzz", "FuzzDebControl", seed))
		if err != nil {
			t.Fatal(err)
		}
		deb, err := unquoteCorpus(b)
		if err != nil {
			t.Fatal(err)
		}
		control, err := DebControl(deb)
		if err != nil || controlField(control, "Package") != "seed" {
			t.Errorf("%s: %q, %v", seed, control, err)
		}
	}
	if _, err := DebControl([]byte("not a deb")); !errors.Is(err, ErrNotDeb) {
		t.Errorf("not a deb: %v", err)
	}
}

// unquoteCorpus decodes a one-value `go test fuzz v1` corpus file.
func unquoteCorpus(b []byte) ([]byte, error) {
	_, rest, _ := strings.Cut(string(b), "\n")
	rest = strings.TrimSpace(rest)
	rest = strings.TrimSuffix(strings.TrimPrefix(rest, "[]byte("), ")")
	s, err := strconv.Unquote(rest)
	return []byte(s), err
}
