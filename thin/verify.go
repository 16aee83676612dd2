package thin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ExThinChecksum is Salt's EX_THIN_CHECKSUM (salt/defaults/exitcodes.py):
// the thin binary on the host is not the one that was sent.
const ExThinChecksum = 12

func init() {
	Register(Command{Name: "verify", Summary: "check this binary's sha256 against the argument", Run: runVerify})
	Register(Command{Name: "install", Summary: "verify this freshly unpacked binary, rename it into place, then run a command", Run: runInstall})
}

// errChecksum means a file's sha256 is not the expected one.
var errChecksum = errors.New("checksum mismatched")

// checkFile compares the sha256 of the file at path with want.
func checkFile(path, want string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return fmt.Errorf("%w: %s, want %s", errChecksum, got, want)
	}
	return nil
}

// verifySelf checks the running binary's file against want and returns
// its path.
func verifySelf(want string) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	return self, checkFile(self, want)
}

// runVerify lets salt-ssh check a thin binary on a host that has no
// sha256sum: the binary hashes its own file and exits 0 only on a match.
func runVerify(_ context.Context, inv *Invocation) int {
	if len(inv.Args) != 1 {
		fmt.Fprintln(inv.Stderr, "usage: salt-thin verify SHA256")
		return ExUsage
	}
	if _, err := verifySelf(inv.Args[0]); err != nil {
		fmt.Fprintf(inv.Stderr, "salt-thin verify: %s\n", err)
		return ExGeneric
	}
	return ExOK
}

// runInstall is the last step of a deploy, in one process so that a cold
// host starts the new binary once instead of three times (verify, then
// mv, then call): `install [--keep NAME] SHA256 SOURCE FINAL [-- command
// args...]` checks that the file SOURCE has the sha256 SHA256, and on a match
// removes SOURCE (unless it is this binary), renames this binary to FINAL
// (same directory, so the rename is atomic and FINAL never names a partial
// binary), removes the binaries of other builds beside it (but NAME), and runs the
// command, if any, in this process with the same standard streams. On a
// mismatch SOURCE and this binary are removed and the exit code is Salt's
// EX_THIN_CHECKSUM.
//
// SOURCE is what was uploaded: the compressed file this binary was just
// unpacked from, or this binary itself when it travelled raw. Checking the
// upload is what Salt does: its shim hashes thin.tgz, not the unpacked
// files (salt/client/ssh/ssh_py_shim.py main), and the decompressor has
// already checked its output against the frame's content checksum. For a
// zstd upload that hashes 4 MB instead of 11.5 MB on every cold host.
func runInstall(ctx context.Context, inv *Invocation) int {
	args := inv.Args
	var rest []string
	for i, a := range args {
		if a == "--" {
			args, rest = args[:i], args[i+1:]
			break
		}
	}
	var keep string
	if len(args) == 5 && args[0] == "--keep" {
		keep, args = args[1], args[2:]
	}
	if len(args) != 3 || strings.ContainsRune(keep, '/') {
		fmt.Fprintln(inv.Stderr, "usage: salt-thin install [--keep NAME] SHA256 SOURCE FINAL [-- command args...]")
		return ExUsage
	}
	want, source, final := args[0], args[1], args[2]
	self, err := os.Executable()
	if err == nil {
		err = checkFile(source, want)
	}
	if err != nil {
		os.Remove(source)
		if self != "" {
			os.Remove(self)
		}
		fmt.Fprintf(inv.Stderr, "thin checksum mismatched: salt-thin install: %s\n", err)
		return ExThinChecksum
	}
	if !filepath.IsAbs(final) {
		final = filepath.Join(filepath.Dir(self), final)
	}
	// Compared as files, not names: os.Executable resolves symlinks that
	// thin_dir's path may go through.
	if !sameFile(filepath.Dir(final), filepath.Dir(self)) {
		fmt.Fprintf(inv.Stderr, "salt-thin install: %s is not beside %s\n", final, self)
		return ExUsage
	}
	if !sameFile(source, self) {
		os.Remove(source)
	}
	if err := os.Rename(self, final); err != nil {
		os.Remove(self)
		fmt.Fprintf(inv.Stderr, "salt-thin install: %s\n", err)
		return 73 // EX_CANTCREAT
	}
	removeOtherBuilds(final, keep)
	if len(rest) == 0 {
		return ExOK
	}
	return Main(ctx, rest, inv.Stdin, inv.Stdout, inv.Stderr)
}

// sameFile reports whether paths a and b name the same existing file.
func sameFile(a, b string) bool {
	sa, err := os.Stat(a)
	if err != nil {
		return false
	}
	sb, err := os.Stat(b)
	return err == nil && os.SameFile(sa, sb)
}

// removeOtherBuilds deletes the thin binaries of other builds in final's
// directory, except keep: the full thin of this salt-ssh build, which a
// core thin's install leaves alone (a concurrent run may have just put
// it there). Names with a dot are temporaries of runs: those still in
// flight are left alone, stale ones go (see staleUpload).
func removeOtherBuilds(final, keep string) {
	dir, self := filepath.Split(final)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return // only housekeeping
	}
	now := time.Now()
	for _, e := range entries {
		n := e.Name()
		if n == self || n == keep {
			continue
		}
		if isUploadTemp(n) {
			removeIfStale(filepath.Join(dir, n), e, now)
			continue
		}
		if !strings.HasPrefix(n, "salt-thin-") || strings.Contains(n, ".") {
			continue
		}
		os.Remove(filepath.Join(dir, n))
	}
}

// staleUpload is how long an upload temporary must have gone unwritten
// before an install removes it. A killed salt-ssh leaves its partial
// upload behind (.salt-thin-<id>.up-<n>.zst.tmp-<x>, up to the whole
// compressed thin each time), as may a kill between upload and install
// (salt-thin-<id>.up-<n>.zst, and the unpacked salt-thin-<id>.up-<n>).
// The age is the file's mtime against this host's clock: the <n> in the
// name is the controller's clock and any pid would be the controller's,
// neither comparable here, while an upload in flight moves the mtime
// with every 128 KiB write (sshconn's SFTP chunk) and zstd gives its
// output the upload's mtime. Ten minutes without a write is far beyond
// any link that can carry a thin at all, so a concurrent run's upload
// is never taken.
const staleUpload = 10 * time.Minute

// isUploadTemp reports whether name is one of salt-ssh's upload
// temporaries in thin_dir: "salt-thin-<id>.up-<n>[.zst|.gz]", the
// upload or its unpacked binary, or ".salt-thin-<id>.up-<n>….tmp-<x>",
// sshconn.Upload's partial file.
func isUploadTemp(name string) bool {
	base, partial := strings.CutPrefix(name, ".")
	if !strings.HasPrefix(base, "salt-thin-") || !strings.Contains(base, ".up-") {
		return false
	}
	return !partial || strings.Contains(base, ".tmp-")
}

// removeIfStale removes the regular file p when it was last written
// staleUpload or more before now.
func removeIfStale(p string, e os.DirEntry, now time.Time) {
	if !e.Type().IsRegular() {
		return
	}
	info, err := e.Info()
	if err != nil || now.Sub(info.ModTime()) < staleUpload {
		return
	}
	os.Remove(p)
}
