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
)

// ExThinChecksum is Salt's EX_THIN_CHECKSUM (salt/defaults/exitcodes.py):
// the thin binary on the host is not the one that was sent.
const ExThinChecksum = 12

func init() {
	Register(Command{Name: "verify", Summary: "check this binary's sha256 against the argument", Run: runVerify})
	Register(Command{Name: "install", Summary: "verify this freshly unpacked binary, rename it into place, then run a command", Run: runInstall})
}

// errChecksum means the running binary's sha256 is not the expected one.
var errChecksum = errors.New("checksum mismatched")

// verifySelf hashes the running binary's file and compares it with want;
// it returns the file's path.
func verifySelf(want string) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	f, err := os.Open(self)
	if err != nil {
		return self, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return self, err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return self, fmt.Errorf("%w: %s, want %s", errChecksum, got, want)
	}
	return self, nil
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
// mv, then call): `install SHA256 FINAL [-- command args...]` hashes this
// binary's own file, and on a match renames it to FINAL (same directory,
// so the rename is atomic and FINAL never names a partial binary), removes
// the binaries of other builds beside it, and runs the command, if any, in
// this process with the same standard streams. On a mismatch the file is
// removed and the exit code is Salt's EX_THIN_CHECKSUM. The upload was
// checked by its codec's checksum before this code runs; this guards the
// rename into place, as the separate verify step did.
func runInstall(ctx context.Context, inv *Invocation) int {
	args := inv.Args
	var rest []string
	for i, a := range args {
		if a == "--" {
			args, rest = args[:i], args[i+1:]
			break
		}
	}
	if len(args) != 2 {
		fmt.Fprintln(inv.Stderr, "usage: salt-thin install SHA256 FINAL [-- command args...]")
		return ExUsage
	}
	self, err := verifySelf(args[0])
	if err != nil {
		if self != "" {
			os.Remove(self)
		}
		fmt.Fprintf(inv.Stderr, "thin checksum mismatched: salt-thin install: %s\n", err)
		return ExThinChecksum
	}
	final := args[1]
	if !filepath.IsAbs(final) {
		final = filepath.Join(filepath.Dir(self), final)
	}
	if filepath.Dir(final) != filepath.Dir(self) {
		fmt.Fprintf(inv.Stderr, "salt-thin install: %s is not beside %s\n", final, self)
		return ExUsage
	}
	if err := os.Rename(self, final); err != nil {
		os.Remove(self)
		fmt.Fprintf(inv.Stderr, "salt-thin install: %s\n", err)
		return 73 // EX_CANTCREAT
	}
	removeOtherBuilds(final)
	if len(rest) == 0 {
		return ExOK
	}
	return Main(ctx, rest, inv.Stdin, inv.Stdout, inv.Stderr)
}

// removeOtherBuilds deletes the thin binaries of other builds in final's
// directory. Names with a dot are temporaries of runs still in flight and
// are left alone.
func removeOtherBuilds(final string) {
	dir, keep := filepath.Split(final)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return // only housekeeping
	}
	for _, e := range entries {
		n := e.Name()
		if n == keep || !strings.HasPrefix(n, "salt-thin-") || strings.Contains(n, ".") {
			continue
		}
		os.Remove(filepath.Join(dir, n))
	}
}
