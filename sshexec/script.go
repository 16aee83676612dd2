package sshexec

import (
	"fmt"
	"strings"
)

// Exit codes the remote scripts use; they follow salt/defaults/exitcodes.py
// so that an operator reading a retcode sees Salt's meaning.
const (
	exitThinDeploy   = 11 // EX_THIN_DEPLOY: thin binary missing, send it
	exitThinChecksum = 12 // EX_THIN_CHECKSUM: transfer corrupted
	exitCantCreate   = 73 // EX_CANTCREAT: thin_dir unusable
)

// deployMarker starts the line a host prints when it needs the thin binary.
const deployMarker = "BRINE-DEPLOY"

// scriptParams describes one host's remote command.
type scriptParams struct {
	ThinDir  string // absolute path of the host's thin_dir
	Bin      string // file name of the thin binary inside ThinDir
	Sudo     bool
	SudoUser string
	Wipe     bool
	Umask    int    // cmd_umask; negative means leave the login umask alone
	SetPath  string // roster set_path, evaluated by the remote shell
	Force    bool   // deploy even when this build is present
	Password bool   // the first stdin line is the sudo password
	TTY      bool   // sudo needs a terminal (roster tty, requiretty)
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// prelude sets T and B and refuses a thin_dir that another user owns or
// that is not a directory, as Salt's shim does ("Attack detected").
func (p scriptParams) prelude(b *strings.Builder) {
	fmt.Fprintf(b, "T=%s; B=\"$T\"/%s\n", shellQuote(p.ThinDir), shellQuote(p.Bin))
	if p.SetPath != "" {
		// set_path is meant to be expanded remotely ("$PATH:/opt/bin").
		fmt.Fprintf(b, "PATH=\"%s\"; export PATH\n", strings.NewReplacer(`"`, `\"`, "`", "\\`").Replace(p.SetPath))
	}
	fmt.Fprintf(b, "if [ -L \"$T\" ] || { [ -e \"$T\" ] && [ ! -d \"$T\" ]; }; then echo \"salt path $T exists but is not a directory\" >&2; exit %d; fi\n", exitCantCreate)
	fmt.Fprintf(b, "if [ -d \"$T\" ] && [ ! -O \"$T\" ]; then echo \"thin_dir $T is owned by another user; refusing to use it\" >&2; exit %d; fi\n", exitCantCreate)
}

// invoke runs the thin binary on the job waiting on stdin. Under sudo it
// goes through the binary's own sudo subcommand, which answers a password
// prompt from the first stdin line and gives sudo a pty for requiretty
// (see thin/sudo.go). With --wipe the job itself removes thin_dir once
// its result is written, as the user that owns what the job left there.
func (p scriptParams) invoke(b *strings.Builder) {
	if p.Umask >= 0 {
		fmt.Fprintf(b, "umask %03o\n", p.Umask)
	}
	call := "call"
	if p.Wipe {
		call += " --wipe \"$T\""
	}
	if !p.Sudo {
		fmt.Fprintf(b, "exec \"$B\" %s\n", call)
		return
	}
	if !p.Password && !p.TTY {
		// Plain passwordless sudo needs no helper: one process fewer.
		user := ""
		if p.SudoUser != "" {
			user = "-u " + shellQuote(p.SudoUser) + " "
		}
		fmt.Fprintf(b, "exec sudo -n %s-- \"$B\" %s\n", user, call)
		return
	}
	sudo := "sudo"
	if p.SudoUser != "" {
		sudo += " -u " + shellQuote(p.SudoUser)
	}
	if p.Password {
		sudo += " --password"
	}
	if p.TTY {
		sudo += " --tty"
	}
	fmt.Fprintf(b, "exec \"$B\" %s -- %s\n", sudo, call)
}

// probeScript runs the thin binary when this version is present, and
// otherwise creates thin_dir and reports what to send: the kernel, the
// machine and whether gzip can unpack a compressed upload.
func (p scriptParams) probeScript() string {
	var b strings.Builder
	p.prelude(&b)
	if !p.Force {
		b.WriteString("if [ -x \"$B\" ]; then\n")
		p.invoke(&b)
		b.WriteString("fi\n")
	}
	fmt.Fprintf(&b, "umask 077; mkdir -p \"$T\" && chmod 700 \"$T\" || exit %d\n", exitCantCreate)
	fmt.Fprintf(&b, "Z=; command -v gzip >/dev/null 2>&1 && Z=gzip\n")
	fmt.Fprintf(&b, "echo \"%s $(uname -s) $(uname -m) $Z\"; exit %d\n", deployMarker, exitThinDeploy)
	return b.String()
}

// installScript turns an uploaded file (gzip-compressed or raw) into the
// thin binary, verifying its sha256 where the host can compute one, then
// runs the job. Work files carry the shell's pid so that concurrent runs
// against one host never share a half-written file; the final name only
// ever appears by rename.
func (p scriptParams) installScript(upload string, gzipped bool, sha string) string {
	var b strings.Builder
	p.prelude(&b)
	fmt.Fprintf(&b, "U=\"$T\"/%s; W=\"$B.tmp.$$\"; S=%s\n", shellQuote(upload), shellQuote(sha))
	if gzipped {
		fmt.Fprintf(&b, "gzip -dc \"$U\" > \"$W\" || { rm -f \"$U\" \"$W\"; echo 'thin unpack failed' >&2; exit %d; }; rm -f \"$U\"\n", exitThinChecksum)
	} else {
		b.WriteString("mv -f \"$U\" \"$W\" || exit 73\n")
	}
	fmt.Fprintf(&b, "if command -v sha256sum >/dev/null 2>&1; then set -- $(sha256sum \"$W\"); if [ \"$1\" != \"$S\" ]; then rm -f \"$W\"; echo 'thin checksum mismatched' >&2; exit %d; fi; fi\n", exitThinChecksum)
	fmt.Fprintf(&b, "chmod 700 \"$W\" && mv -f \"$W\" \"$B\" || exit %d\n", exitCantCreate)
	// Drop binaries of other versions; temporaries (with a dot) belong to
	// runs still in flight.
	b.WriteString("for f in \"$T\"/salt-thin-*; do n=${f##*/}; case $n in \"${B##*/}\"|*.*) ;; *) rm -f \"$f\";; esac; done\n")
	p.invoke(&b)
	return b.String()
}

// wipeScript removes thin_dir; used when a run ends before the thin
// binary could do it (--wipe after a failure).
func wipeScript(thinDir string) string {
	return "rm -rf " + shellQuote(thinDir)
}
