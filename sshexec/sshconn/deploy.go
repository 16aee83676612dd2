package sshconn

import (
	"context"
	"fmt"
	"strings"

	"golang.org/x/crypto/ssh"
)

// deployScript appends the key read from stdin to the login user's
// ~/.ssh/authorized_keys unless a line already holds it (matched on key
// type and base64, so options and comments do not matter). A missing
// ~/.ssh is created 0700 and a missing file 0600; existing ones keep their
// modes and lines. It is what ssh-copy-id does, in POSIX sh.
const deployScript = `umask 077
IFS= read -r key || [ -n "$key" ] || exit 65
set -- $key
case "$1" in ssh-*|ecdsa-*|sk-*) ;; *) echo "not a public key" >&2; exit 65;; esac
kb="$1 $2"
d="$HOME/.ssh"
f="$d/authorized_keys"
[ -d "$d" ] || mkdir "$d" || exit 73
[ -e "$f" ] || : > "$f" || exit 73
if grep -qF -- "$kb" "$f"; then exit 0; fi
if [ -s "$f" ] && [ -n "$(tail -c 1 "$f")" ]; then echo >> "$f" || exit 73; fi
printf '%s\n' "$key" >> "$f" || exit 73
`

// DeployKey installs pubLine (one authorized_keys line, as in <priv>.pub)
// for the connection's login user, as Salt's --key-deploy does with
// ssh-copy-id. The key travels on stdin, never in a command line, and the
// script runs under /bin/sh whatever the login shell.
func DeployKey(ctx context.Context, conn *Conn, pubLine string) error {
	pubLine = strings.TrimSpace(pubLine)
	if strings.ContainsAny(pubLine, "\n\r") {
		return fmt.Errorf("deploy key on %s: more than one line", conn.Addr())
	}
	if _, _, _, _, err := ssh.ParseAuthorizedKey([]byte(pubLine)); err != nil {
		return fmt.Errorf("deploy key on %s: %w", conn.Addr(), err)
	}
	cmd := "/bin/sh -c '" + strings.ReplaceAll(deployScript, "'", `'\''`) + "'"
	_, err := conn.Output(ctx, cmd, strings.NewReader(pubLine+"\n"))
	if err != nil {
		return fmt.Errorf("deploy key on %s: %w", conn.Addr(), err)
	}
	return nil
}
