package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
)

// RepoOptions describe the repositories `pkgtool repo` lays out.
type RepoOptions struct {
	In, Out string // the packages (In/deb, In/rpm) and the repository root
	Suite   string // APT suite and codename: stable
	Comp    string // APT component: main
	Time    time.Time
	Key     *openpgp.Entity
	// Bootstrap, when set, is the bootstrap script published at the root
	// as bootstrap-salt.sh.
	Bootstrap string
	Archs     []string
	DebFiles  []string
	RPMFiles  []string
}

// Repository layout, relative to the root. Clients use:
//
//	deb [signed-by=/usr/share/keyrings/brine-archive-keyring.gpg] URL stable main
//	baseurl=URL/rpm  repo_gpgcheck=1  gpgkey=URL/RPM-GPG-KEY-brine
const (
	KeyringGPG = "brine-archive-keyring.gpg" // binary, for /usr/share/keyrings
	KeyringASC = "brine-archive-keyring.asc"
	RPMKey     = "RPM-GPG-KEY-brine"
	RPMDir     = "rpm"
	// BootstrapScript is the installer's name at the root:
	//	curl -fsSL URL/bootstrap-salt.sh | sh -s -- -R URL -A master
	BootstrapScript = "bootstrap-salt.sh"
)

func cmdRepo(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("repo", flag.ContinueOnError)
	var o RepoOptions
	fs.StringVar(&o.In, "in", "dist", "the packages: IN/deb/*.deb and IN/rpm/*.rpm")
	fs.StringVar(&o.Out, "out", "dist/repo", "the repository root")
	fs.StringVar(&o.Suite, "suite", "stable", "the APT suite")
	fs.StringVar(&o.Comp, "component", "main", "the APT component")
	fs.StringVar(&o.Bootstrap, "bootstrap", "packaging/bootstrap-salt.sh", "the bootstrap script to publish (\"\" for none)")
	key := fs.String("key", "", "the armored secret key that signs the repository")
	pass := fs.String("passphrase-file", "", "a file holding the key's passphrase, if it has one")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *key == "" {
		return errors.New("-key is required (pkgtool key -out DIR makes a throwaway one)")
	}
	var err error
	if o.Key, err = ReadKey(*key, *pass); err != nil {
		return err
	}
	o.Time = time.Now().UTC()
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return fmt.Errorf("SOURCE_DATE_EPOCH=%q: %w", s, err)
		}
		o.Time = time.Unix(n, 0).UTC()
	}
	o.DebFiles, _ = filepath.Glob(filepath.Join(o.In, "deb", "*.deb"))
	o.RPMFiles, _ = filepath.Glob(filepath.Join(o.In, "rpm", "*.rpm"))
	if err := MakeRepo(ctx, o); err != nil {
		return err
	}
	fmt.Fprintln(stdout, o.Out)
	return nil
}

// MakeRepo lays out the APT and YUM repositories and the public key.
func MakeRepo(ctx context.Context, o RepoOptions) error {
	if len(o.DebFiles) == 0 && len(o.RPMFiles) == 0 {
		return errors.New("no packages to publish")
	}
	if o.Suite == "" {
		o.Suite = "stable"
	}
	if o.Comp == "" {
		o.Comp = "main"
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return err
	}
	if err := writePublicKey(o); err != nil {
		return err
	}
	if o.Bootstrap != "" {
		if err := copyFile(o.Bootstrap, filepath.Join(o.Out, BootstrapScript)); err != nil {
			return err
		}
	}
	if len(o.DebFiles) > 0 {
		if err := aptRepo(o); err != nil {
			return fmt.Errorf("apt repository: %w", err)
		}
	}
	if len(o.RPMFiles) > 0 {
		if err := yumRepo(ctx, o); err != nil {
			return fmt.Errorf("yum repository: %w", err)
		}
	}
	return nil
}

func writePublicKey(o RepoOptions) error {
	var bin, asc bytes.Buffer
	if err := o.Key.Serialize(&bin); err != nil {
		return err
	}
	if err := armorPublic(o.Key, &asc); err != nil {
		return err
	}
	for name, b := range map[string][]byte{KeyringGPG: bin.Bytes(), KeyringASC: asc.Bytes(), RPMKey: asc.Bytes()} {
		if err := os.WriteFile(filepath.Join(o.Out, name), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// aptRepo copies the debs into pool/<component>/ and writes, per
// architecture, dists/<suite>/<component>/binary-<arch>/Packages(.gz),
// then the Release file over them, signed inline (InRelease) and
// detached (Release.gpg).
func aptRepo(o RepoOptions) error {
	byArch := map[string][]string{}
	for _, deb := range o.DebFiles {
		stanza, arch, err := debStanza(deb, "pool/"+o.Comp+"/"+filepath.Base(deb))
		if err != nil {
			return err
		}
		if err := copyFile(deb, filepath.Join(o.Out, "pool", o.Comp, filepath.Base(deb))); err != nil {
			return err
		}
		byArch[arch] = append(byArch[arch], stanza)
	}
	archs := make([]string, 0, len(byArch))
	for a := range byArch {
		archs = append(archs, a)
	}
	sort.Strings(archs)
	dist := filepath.Join(o.Out, "dists", o.Suite)
	var index []string // paths relative to dist
	for _, a := range archs {
		sort.Strings(byArch[a])
		body := []byte(strings.Join(byArch[a], "\n"))
		rel := o.Comp + "/binary-" + a + "/Packages"
		gz, err := gzipBytes(body)
		if err != nil {
			return err
		}
		for name, b := range map[string][]byte{rel: body, rel + ".gz": gz} {
			if err := writeFile(filepath.Join(dist, name), b); err != nil {
				return err
			}
		}
		index = append(index, rel, rel+".gz")
	}
	release, err := releaseFile(o, dist, archs, index)
	if err != nil {
		return err
	}
	return signRelease(o, dist, release)
}

// releaseFile is dists/<suite>/Release: what the suite holds and the
// sums of every index.
func releaseFile(o RepoOptions, dist string, archs, index []string) ([]byte, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "Origin: Brine\nLabel: Brine\nSuite: %s\nCodename: %s\n", o.Suite, o.Suite)
	fmt.Fprintf(&b, "Date: %s\n", o.Time.Format("Mon, 02 Jan 2006 15:04:05 UTC"))
	fmt.Fprintf(&b, "Architectures: %s\nComponents: %s\n", strings.Join(archs, " "), o.Comp)
	b.WriteString("Description: Brine, a Go implementation of SaltStack\n")
	sums := map[string][]string{}
	for _, rel := range index {
		data, err := os.ReadFile(filepath.Join(dist, rel))
		if err != nil {
			return nil, err
		}
		m, s1, s256 := md5.Sum(data), sha1.Sum(data), sha256.Sum256(data)
		for name, sum := range map[string][]byte{"MD5Sum": m[:], "SHA1": s1[:], "SHA256": s256[:]} {
			sums[name] = append(sums[name], fmt.Sprintf(" %s %d %s", hex.EncodeToString(sum), len(data), rel))
		}
	}
	for _, name := range []string{"MD5Sum", "SHA1", "SHA256"} {
		b.WriteString(name + ":\n" + strings.Join(sums[name], "\n") + "\n")
	}
	return []byte(b.String()), nil
}

// signTime is when the repository's signatures are made: its time, or
// the key's creation when the key is younger (a signature older than its
// key is invalid), so the same key and packages sign the same bytes.
func signTime(o RepoOptions) time.Time {
	if c := o.Key.PrimaryKey.CreationTime; c.After(o.Time) {
		return c
	}
	return o.Time
}

func signRelease(o RepoOptions, dist string, release []byte) error {
	inline, err := clearSign(o.Key, release, signTime(o))
	if err != nil {
		return err
	}
	detached, err := detachSign(o.Key, release, signTime(o))
	if err != nil {
		return err
	}
	for name, b := range map[string][]byte{"Release": release, "InRelease": inline, "Release.gpg": detached} {
		if err := writeFile(filepath.Join(dist, name), b); err != nil {
			return err
		}
	}
	return nil
}

// yumRepo copies the rpms into rpm/, runs createrepo_c over them with
// the repository time as its revision (so the same packages give the
// same repodata), and signs repomd.xml (repo_gpgcheck).
func yumRepo(ctx context.Context, o RepoOptions) error {
	if _, err := exec.LookPath("createrepo_c"); err != nil {
		return errors.New("createrepo_c not found (run scripts/install-deps.sh)")
	}
	dir := filepath.Join(o.Out, RPMDir)
	for _, rpm := range o.RPMFiles {
		if err := copyFile(rpm, filepath.Join(dir, filepath.Base(rpm))); err != nil {
			return err
		}
	}
	rev := strconv.FormatInt(o.Time.Unix(), 10)
	cmd := exec.CommandContext(ctx, "createrepo_c", "--quiet", "--update", "--revision", rev,
		"--set-timestamp-to-revision", "--no-database", dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("createrepo_c: %w: %s", err, bytes.TrimSpace(out))
	}
	repomd := filepath.Join(dir, "repodata", "repomd.xml")
	body, err := os.ReadFile(repomd)
	if err != nil {
		return err
	}
	sig, err := detachSign(o.Key, body, signTime(o))
	if err != nil {
		return err
	}
	return writeFile(repomd+".asc", sig)
}

func gzipBytes(b []byte) ([]byte, error) {
	var out bytes.Buffer
	w, err := gzip.NewWriterLevel(&out, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(b); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

func writeFile(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return writeFile(dst, b)
}
