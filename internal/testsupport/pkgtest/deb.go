package pkgtest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// AptRepo is a local file repository of tiny .deb packages and an apt
// configuration (APT_CONFIG) that sees only that repository and keeps
// its lists and caches in a temporary directory, so that apt-get update
// and install in tests leave the host's apt state alone. Packages are
// still installed into the host's dpkg database; every package built is
// purged when the test ends.
type AptRepo struct {
	t    testing.TB
	Dir  string
	repo string
	// Conf is the apt configuration file; Use points APT_CONFIG at it.
	Conf string
}

// NewAptRepo creates an empty repository. It skips the test unless it
// runs as root on a host with apt-get and dpkg-deb.
func NewAptRepo(t testing.TB) *AptRepo {
	t.Helper()
	NeedRoot(t, "apt-get", "dpkg-deb", "dpkg-query")
	lockPackages(t)
	dir := t.TempDir()
	r := &AptRepo{t: t, Dir: dir, repo: filepath.Join(dir, "repo"), Conf: filepath.Join(dir, "apt.conf")}
	for _, d := range []string{"repo", "lists/partial", "cache/archives/partial", "build"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sources := filepath.Join(dir, "sources.list")
	write(t, sources, fmt.Sprintf("deb [trusted=yes] file:%s ./\n", r.repo))
	write(t, r.Conf, fmt.Sprintf(`Dir::Etc::SourceList "%s";
Dir::Etc::SourceParts "/dev/null";
Dir::State::Lists "%s";
Dir::Cache "%s";
APT::Get::List-Cleanup "0";
`, sources, filepath.Join(dir, "lists"), filepath.Join(dir, "cache")))
	r.publish()
	return r
}

// Use points APT_CONFIG at the repository's configuration for the rest
// of the test.
func (r *AptRepo) Use() { r.t.Setenv("APT_CONFIG", r.Conf) }

func write(t testing.TB, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Add builds package name at version (with /usr/share/NAME/version and
// the conffile /etc/NAME.conf), adds it to the repository and
// republishes the index. The package is purged when the test ends.
func (r *AptRepo) Add(name, version string) string {
	r.t.Helper()
	root := filepath.Join(r.Dir, "build", name+"_"+version)
	write(r.t, filepath.Join(root, "DEBIAN/control"), fmt.Sprintf(`Package: %s
Version: %s
Architecture: all
Maintainer: Brine tests <tests@brine.invalid>
Section: misc
Priority: optional
Description: Brine test package
 Built by internal/pkgtest for the pkg module tests.
`, name, version))
	write(r.t, filepath.Join(root, "DEBIAN/conffiles"), "/etc/"+name+".conf\n")
	write(r.t, filepath.Join(root, "etc", name+".conf"), "version="+version+"\n")
	write(r.t, filepath.Join(root, "usr/share", name, "version"), version+"\n")
	deb := filepath.Join(r.repo, name+"_"+version+"_all.deb")
	if out, err := exec.Command("dpkg-deb", "--root-owner-group", "--build", root, deb).CombinedOutput(); err != nil {
		r.t.Fatalf("dpkg-deb: %v\n%s", err, out)
	}
	r.t.Cleanup(func() { Purge(name) })
	r.publish()
	return deb
}

// Purge removes a test package with everything it left.
func Purge(name string) {
	cmd := exec.Command("dpkg", "--purge", name)
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	cmd.Run()
}

// publish writes the flat repository's Packages index.
func (r *AptRepo) publish() {
	r.t.Helper()
	debs, _ := filepath.Glob(filepath.Join(r.repo, "*.deb"))
	var b strings.Builder
	for _, deb := range debs {
		ctrl, err := exec.Command("dpkg-deb", "-f", deb).Output()
		if err != nil {
			r.t.Fatalf("dpkg-deb -f %s: %v", deb, err)
		}
		data, err := os.ReadFile(deb)
		if err != nil {
			r.t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		b.WriteString(strings.TrimRight(string(ctrl), "\n"))
		fmt.Fprintf(&b, "\nFilename: ./%s\nSize: %d\nSHA256: %s\n\n", filepath.Base(deb), len(data), hex.EncodeToString(sum[:]))
	}
	write(r.t, filepath.Join(r.repo, "Packages"), b.String())
}

// DpkgStatus returns dpkg-query's "want ok status version" for name, ""
// when dpkg does not know it.
func DpkgStatus(name string) string {
	out, err := exec.Command("dpkg-query", "-W", "-f", "${Status} ${Version}", name).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// lockPackages serialises the tests that install packages, across test
// binaries (go test runs packages in parallel): each sees the package
// database change only by its own doing. The lock is released after the
// test's packages are purged, since cleanups run last-in first-out. It
// is an advisory flock on the dpkg database directory, which leaves no
// file behind and does not meet dpkg's own fcntl locks.
func lockPackages(t testing.TB) { lockDir(t, "/var/lib/dpkg") }

func lockDir(t testing.TB, dir string) {
	t.Helper()
	f, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	})
}
