package main

import (
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// makeTestRepo lays out the repositories of the new build with `pkgtool
// key` and `pkgtool repo`, as `make repo` runs them, signed with a
// throwaway key made here.
func makeTestRepo(t *testing.T, fx fixture) string {
	t.Helper()
	need(t, "createrepo_c")
	keys, repo := t.TempDir(), filepath.Join(t.TempDir(), "repo")
	for _, args := range [][]string{{"key", "-out", keys},
		{"repo", "-in", fx.New, "-out", repo, "-key", filepath.Join(keys, "secret.asc"),
			"-bootstrap", filepath.Join(fx.Src, BootstrapScript)}} {
		var out, errs strings.Builder
		if code := run(t.Context(), args, &out, &errs); code != 0 {
			t.Fatalf("pkgtool %s: exit %d: %s", strings.Join(args, " "), code, errs.String())
		}
	}
	return repo
}

// serveRepo serves dir over HTTP on addr (the cluster's bridge, which
// the hosts reach) until the test ends.
func serveRepo(t *testing.T, addr, dir string) string {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(addr, "0"))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.FileServer(http.Dir(dir)), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return "http://" + l.Addr().String()
}

// aptSources replaces the host's APT sources with the test repository,
// trusted through keyring (a path in the host, "" for none).
func aptSources(url, keyring string) string {
	opt := ""
	if keyring != "" {
		opt = "[signed-by=" + keyring + "] "
	}
	return `rm -f /etc/apt/sources.list /etc/apt/sources.list.d/*
		echo 'deb ` + opt + url + ` stable main' > /etc/apt/sources.list.d/brine.list`
}

// TestAptRepository serves the signed APT repository to a host, whose
// apt-get refuses it without the key and installs salt-minion from it
// with the key.
func TestAptRepository(t *testing.T) {
	fx := packages(t)
	repo := makeTestRepo(t, fx)
	c, sh := packageHost(t, fx)
	url := serveRepo(t, c.ControllerIP(), repo)
	tmp, _ := c.HostPath("host1", "/tmp")
	if err := copyFile(filepath.Join(repo, KeyringGPG), filepath.Join(tmp, KeyringGPG)); err != nil {
		t.Fatal(err)
	}
	sh(aptSources(url, ""))
	if out := sh("apt-get update 2>&1 || echo UPDATE-FAILED"); !strings.Contains(out, "UPDATE-FAILED") ||
		!strings.Contains(out, "NO_PUBKEY") {
		t.Errorf("apt-get update without the key did not refuse the repository:\n%s", out)
	}
	sh(aptSources(url, "/etc/apt/keyrings/"+KeyringGPG))
	sh("install -D -m 0644 /tmp/" + KeyringGPG + " /etc/apt/keyrings/" + KeyringGPG + " && apt-get update -q && apt-get install -y -q salt-minion")
	got := sh(`dpkg-query -W -f '${Package} ${Version} ${db:Status-Status}\n' salt-common salt-minion
		dpkg-query -W salt-master 2>/dev/null || echo no salt-master`)
	want := "salt-common " + Epoch + ":" + newVersion + " installed\nsalt-minion " + Epoch + ":" + newVersion + " installed\nno salt-master"
	if got != want {
		t.Errorf("installed from the repository:\n%s\nwant\n%s", got, want)
	}
}

// TestYumRepository checks the YUM repository as far as this Debian
// machine can: yum and dnf are not here, so the repodata is read as they
// read it: repomd.xml verifies against the published key with gpgv
// (repo_gpgcheck), and primary.xml lists every rpm with the checksum of
// the file served and the epoch-versioned requirements yum resolves.
func TestYumRepository(t *testing.T) {
	fx := packages(t)
	need(t, "gpgv")
	repo := makeTestRepo(t, fx)
	dir := filepath.Join(repo, RPMDir)
	if out, err := runErr("gpgv", "--keyring", filepath.Join(repo, KeyringGPG),
		filepath.Join(dir, "repodata", "repomd.xml.asc"), filepath.Join(dir, "repodata", "repomd.xml")); err != nil {
		t.Fatalf("gpgv repomd.xml: %v\n%s", err, out)
	}
	pkgs := primary(t, dir)
	rpms, _ := filepath.Glob(filepath.Join(fx.New, "rpm", "*.rpm"))
	if len(pkgs) != len(rpms) || len(rpms) == 0 {
		t.Fatalf("primary.xml lists %d packages, the build has %d", len(pkgs), len(rpms))
	}
	for _, p := range pkgs {
		b, err := os.ReadFile(filepath.Join(dir, p.Location.Href))
		if err != nil {
			t.Fatalf("%s: %v", p.Location.Href, err)
		}
		sum := sha256.Sum256(b)
		if p.Checksum.Type != "sha256" || p.Checksum.Value != hex.EncodeToString(sum[:]) {
			t.Errorf("%s: checksum %s:%s does not match the file", p.Name, p.Checksum.Type, p.Checksum.Value)
		}
		if p.Version.Epoch != Epoch || p.Version.Ver != newVersion || p.Version.Rel != rpmRelease {
			t.Errorf("%s: version %+v", p.Name, p.Version)
		}
		if dep, ok := dependsOn[debName(p.Name)]; ok {
			b, _ := SpecByName(dep)
			if !p.requires(b.PackageName(RPM), "EQ", Epoch, newVersion, rpmRelease) {
				t.Errorf("%s does not require %s = %s:%s-%s: %+v", p.Name, b.PackageName(RPM), Epoch, newVersion, rpmRelease, p.Format.Requires)
			}
		}
	}
}

// debName maps an rpm name back to the spec's name.
func debName(rpm string) string {
	for _, s := range Specs {
		if s.PackageName(RPM) == rpm {
			return s.Name
		}
	}
	return rpm
}

type primaryPackage struct {
	Name    string `xml:"name"`
	Version struct {
		Epoch string `xml:"epoch,attr"`
		Ver   string `xml:"ver,attr"`
		Rel   string `xml:"rel,attr"`
	} `xml:"version"`
	Checksum struct {
		Type  string `xml:"type,attr"`
		Value string `xml:",chardata"`
	} `xml:"checksum"`
	Location struct {
		Href string `xml:"href,attr"`
	} `xml:"location"`
	Format struct {
		Requires []struct {
			Name  string `xml:"name,attr"`
			Flags string `xml:"flags,attr"`
			Epoch string `xml:"epoch,attr"`
			Ver   string `xml:"ver,attr"`
			Rel   string `xml:"rel,attr"`
		} `xml:"requires>entry"`
	} `xml:"format"`
}

func (p primaryPackage) requires(name, flags, epoch, ver, rel string) bool {
	for _, r := range p.Format.Requires {
		if r.Name == name && r.Flags == flags && r.Epoch == epoch && r.Ver == ver && r.Rel == rel {
			return true
		}
	}
	return false
}

// primary reads repodata/*-primary.xml.gz as repomd.xml names it.
func primary(t *testing.T, dir string) []primaryPackage {
	t.Helper()
	var md struct {
		Data []struct {
			Type     string `xml:"type,attr"`
			Location struct {
				Href string `xml:"href,attr"`
			} `xml:"location"`
		} `xml:"data"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "repodata", "repomd.xml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := xml.Unmarshal(b, &md); err != nil {
		t.Fatal(err)
	}
	for _, d := range md.Data {
		if d.Type != "primary" {
			continue
		}
		f, err := os.Open(filepath.Join(dir, d.Location.Href))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			Packages []primaryPackage `xml:"package"`
		}
		if err := xml.NewDecoder(zr).Decode(&m); err != nil {
			t.Fatal(err)
		}
		return m.Packages
	}
	t.Fatal("repomd.xml names no primary metadata")
	return nil
}

func runErr(name string, args ...string) (string, error) {
	out, err := exec.Command(name, args...).CombinedOutput()
	return string(out), err
}
