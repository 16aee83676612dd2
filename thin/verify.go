package thin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
)

func init() {
	Register(Command{Name: "verify", Summary: "check this binary's sha256 against the argument", Run: runVerify})
}

// runVerify lets salt-ssh check a freshly unpacked thin binary on a host
// that has no sha256sum: the binary hashes its own file and exits 0 only
// on a match. The upload was already checked by the codec's checksum, so
// this runs intact code; it guards the last step, the rename into place.
func runVerify(_ context.Context, inv *Invocation) int {
	if len(inv.Args) != 1 {
		fmt.Fprintln(inv.Stderr, "usage: salt-thin verify SHA256")
		return ExUsage
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(inv.Stderr, "salt-thin verify: %s\n", err)
		return ExGeneric
	}
	f, err := os.Open(self)
	if err != nil {
		fmt.Fprintf(inv.Stderr, "salt-thin verify: %s\n", err)
		return ExGeneric
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		fmt.Fprintf(inv.Stderr, "salt-thin verify: %s\n", err)
		return ExGeneric
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != inv.Args[0] {
		fmt.Fprintf(inv.Stderr, "salt-thin verify: checksum mismatched: %s, want %s\n", got, inv.Args[0])
		return ExGeneric
	}
	return ExOK
}
