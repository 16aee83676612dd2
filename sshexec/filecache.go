package sshexec

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/roster"
)

// fillCache makes sure the host's content cache (<thin_dir>/files) holds
// every file in uploads (sha256 → local path): one command lists the
// missing ones, and only those go over SFTP, each under a temporary name
// renamed into place. A file the host already has costs nothing. With
// the relay on, the large ones come through it instead (relay.go), and
// go over SFTP after all if the relay could not bring them.
func (e *Executor) fillCache(ctx context.Context, conn Conn, t *roster.Target, uploads map[string]string, rr *relayRun) error {
	p := e.scriptParams(t)
	sums := make([]string, 0, len(uploads))
	for sum := range uploads {
		sums = append(sums, sum)
	}
	sort.Strings(sums)
	var b strings.Builder
	p.prelude(&b)
	fmt.Fprintf(&b, "umask 077; mkdir -p \"$T/files\" && chmod %s \"$T\" \"$T/files\" || exit %d\n", p.dirMode(), exitCantCreate)
	fmt.Fprintf(&b, "for h in %s; do [ -f \"$T/files/$h\" ] || echo \"$h\"; done\n", strings.Join(sums, " "))
	var out, errb bytes.Buffer
	code, err := conn.Run(ctx, b.String(), nil, &out, &errb)
	if err != nil {
		return fmt.Errorf("check file cache on %s: %w", t.ID, err)
	}
	if code != 0 {
		return fmt.Errorf("check file cache on %s: exit %d: %s", t.ID, code, strings.TrimSpace(errb.String()))
	}
	mode := os.FileMode(0o600)
	if p.SudoUser != "" {
		mode = 0o640
	}
	missing := strings.Fields(out.String())
	if rr != nil {
		relayed, rest := rr.split(uploads, missing)
		if len(relayed) > 0 {
			if err := rr.fill(ctx, conn, t, p, relayed); err != nil {
				e.opts.Log.Warn("relay failed; sending over SFTP", logattr.Host, t.ID, logattr.Err, err)
				rest = missing
			}
		}
		missing = rest
	}
	for _, sum := range missing {
		local, ok := uploads[sum]
		if !ok {
			continue
		}
		f, err := os.Open(local)
		if err != nil {
			return fmt.Errorf("send %s: %w", local, err)
		}
		err = conn.Upload(ctx, f, p.ThinDir+"/files/"+sum, mode)
		f.Close()
		if err != nil {
			return fmt.Errorf("send %s to %s: %w", local, t.ID, err)
		}
	}
	return nil
}
