package sshexec

import (
	"fmt"
	"os"
	"strings"

	"github.com/brinesalt/brine/thin/frame"
)

// Exit codes the remote scripts use; they follow salt/defaults/exitcodes.py
// so that an operator reading a retcode sees Salt's meaning.
const (
	exitThinDeploy   = frame.ExitThinDeploy // EX_THIN_DEPLOY: thin binary missing, send it
	exitThinChecksum = 12                   // EX_THIN_CHECKSUM: transfer corrupted
	exitCantCreate   = 73                   // EX_CANTCREAT: thin_dir unusable
)

// deployMarker starts the line a host prints when it needs a thin binary
// (see frame.DeployMarker): the probe prints it on a cold host, with
// hasFullToken only in a redeploy's probe, which does not run the full
// thin it found; a binary that cannot serve the host prints it with
// frame.NeedFullToken.
const (
	deployMarker = frame.DeployMarker
	hasFullToken = frame.HasFullToken
)

// waitToken ends the deploy line of a probe that waits for the thin;
// goMarker starts the controller's go-ahead line to it, followed by the
// one-line command that installs the upload and runs the job.
const (
	waitToken = "wait"
	goMarker  = "BRINE-GO"
)

// scriptParams describes one host's remote command.
type scriptParams struct {
	ThinDir string // absolute path of the host's thin_dir
	Bin     string // file name of the (full) thin binary inside ThinDir
	// Core is the core flavor's binary name when the job may run on it
	// (see thin/core), else empty: the probe then runs the full thin if
	// present, else the core if present, else asks for the core.
	Core string
	// Keep is a binary an install leaves in place besides its own: the
	// full thin, when what is installed is the core flavor.
	Keep     string
	Sudo     bool
	SudoUser string
	Wipe     bool
	Umask    int    // cmd_umask; negative means leave the login umask alone
	SetPath  string // roster set_path, evaluated by the remote shell
	Force    bool   // deploy even when this build is present
	Password bool   // the first stdin line is the sudo password
	TTY      bool   // sudo needs a terminal (roster tty, requiretty)
	// Wait makes a cold host's probe wait for the thin on the same
	// session instead of exiting (see probeScript); the job must then be
	// one line on stdin (after the password line, if any).
	Wait bool
	// LoginRoot: the login user is root, who may fill the blocks df's
	// Available leaves out (see checkSpace).
	LoginRoot bool
}

// dirFileMode and binFileMode keep thin_dir private to the login user, or, with
// sudo_user, shared with the login user's group, which sudo_user must be
// in, as Salt requires (doc/topics/ssh/roster.rst: sudo_user).
func (p scriptParams) dirFileMode() os.FileMode {
	if p.SudoUser != "" {
		return 0o770
	}
	return 0o700
}

func (p scriptParams) binFileMode() os.FileMode {
	if p.SudoUser != "" {
		return 0o750
	}
	return 0o700
}

// dirMode and binMode are the modes as chmod takes them.
func (p scriptParams) dirMode() string { return fmt.Sprintf("%o", p.dirFileMode()) }
func (p scriptParams) binMode() string { return fmt.Sprintf("%o", p.binFileMode()) }

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// prelude sets T and B and refuses a thin_dir that another user owns or
// that is not a directory, as Salt's shim does ("Attack detected").
func (p scriptParams) prelude(b *strings.Builder) {
	fmt.Fprintf(b, "T=%s; B=\"$T\"/%s\n", shellQuote(p.ThinDir), shellQuote(p.Bin))
	if p.Core != "" {
		fmt.Fprintf(b, "C=\"$T\"/%s\n", shellQuote(p.Core))
	}
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
	p.invokeBin(b, "$B")
}

// invokeBin is invoke with the binary named by the shell variable bin
// ("$B" or "$C").
func (p scriptParams) invokeBin(b *strings.Builder, bin string) {
	p.runBin(b, bin, "exec \""+bin+"\"")
}

// run writes the command that runs the job with the thin binary started
// by launch: `exec "$B"` on a warm host, or, right after an upload, the new
// binary's install subcommand, which verifies and renames itself and then
// carries on in the same process (see thin/verify.go).
func (p scriptParams) run(b *strings.Builder, launch string) {
	p.runBin(b, "$B", launch)
}

// runBin is run for the binary named by the shell variable bin.
func (p scriptParams) runBin(b *strings.Builder, bin, launch string) {
	if p.Umask >= 0 {
		fmt.Fprintf(b, "umask %03o\n", p.Umask)
	}
	call := "call"
	if p.Wipe {
		call += " --wipe \"$T\""
	}
	if !p.Sudo {
		fmt.Fprintf(b, "%s %s\n", launch, call)
		return
	}
	if p.SudoUser != "" {
		// A thin_dir made before sudo_user was set is private: open it to
		// the group.
		fmt.Fprintf(b, "chmod %s \"$T\"; chmod %s \"%s\"\n", p.dirMode(), p.binMode(), bin)
	}
	if !p.Password && !p.TTY {
		// Plain passwordless sudo needs no helper: one process fewer.
		user := ""
		if p.SudoUser != "" {
			user = "-u " + shellQuote(p.SudoUser) + " "
		}
		fmt.Fprintf(b, "exec sudo -n %s-- %s\"%s\" %s\n", user, p.keepPath(), bin, call)
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
	if p.SetPath != "" {
		sudo += " --path \"$PATH\""
	}
	fmt.Fprintf(b, "%s %s -- %s\n", launch, sudo, call)
}

// keepPath carries a roster set_path across sudo, whose env_reset would
// otherwise replace it with secure_path.
func (p scriptParams) keepPath() string {
	if p.SetPath == "" {
		return ""
	}
	return "env PATH=\"$PATH\" "
}

// probeScript runs the thin binary when this version is present, and
// otherwise reports what to send: the kernel, the machine and the best
// decompressor it has (zstd, gzip or none); with Wait it then waits on the
// same session for the upload and runs the job (see attemptWaiting), else
// it exits 11. A cold host pays for every process started here, so it
// starts only df under bash: thin_dir is made by the upload (over SFTP),
// bash's own variables name the machine, and df reports the room left
// there (see freeSpace), so a full disk is named as such.
func (p scriptParams) probeScript() string {
	var b strings.Builder
	p.prelude(&b)
	if !p.Force {
		b.WriteString("if [ -x \"$B\" ]; then\n")
		p.invoke(&b)
		b.WriteString("fi\n")
		if p.Core != "" {
			b.WriteString("if [ -x \"$C\" ]; then\n")
			p.invokeBin(&b, "$C")
			b.WriteString("fi\n")
		}
	}
	fmt.Fprintf(&b, "Z=; if command -v zstd >/dev/null 2>&1; then Z=zstd; elif command -v gzip >/dev/null 2>&1; then Z=gzip; fi\n")
	if p.Force && p.Core != "" {
		// Redeploying: the core flavor goes only where the full one is not.
		b.WriteString("if [ -x \"$B\" ]; then Z=\"$Z " + hasFullToken + "\"; fi\n")
	}
	// bash knows its kernel and machine: a 64-bit bash names the kernel's
	// architecture, so only other shells and machines pay for uname.
	b.WriteString("case \"$OSTYPE/$HOSTTYPE\" in linux*/x86_64|linux*/aarch64) U=\"Linux $HOSTTYPE\";; *) U=$(uname -s -m);; esac\n")
	p.freeSpace(&b)
	if !p.Wait {
		fmt.Fprintf(&b, "echo \"%s $U $Z$F\"; exit %d\n", deployMarker, exitThinDeploy)
		return b.String()
	}
	// The job a warm host would have read is already on stdin: drop its
	// lines, ask for the thin, and run what the controller sends once the
	// upload is done, the job following again; if stdin closes instead
	// (the upload failed, the controller went away) nothing runs.
	lines := 1
	if p.Password {
		lines = 2
	}
	for range lines {
		fmt.Fprintf(&b, "IFS= read -r L || exit %d\n", exitThinDeploy)
	}
	fmt.Fprintf(&b, "echo \"%s $U $Z$F %s\"\n", deployMarker, waitToken)
	fmt.Fprintf(&b, "IFS= read -r L || exit %[1]d\ncase \"$L\" in \"%[2]s \"*) eval \"${L#%[2]s }\";; *) exit %[1]d;; esac\n", exitThinDeploy, goMarker)
	return b.String()
}

// installScript turns an uploaded file (compressed or raw, already of
// the binary's mode) into the thin binary and runs the job, starting as
// few processes as it can: the decompressor writes the binary beside the
// upload, keeping its mode, and the new binary's install subcommand checks
// the sha256 of what was uploaded (sha), removes the upload, renames
// itself to the final name, drops other builds and runs the job in the
// same process (thin/verify.go). The codec's checksum catches a damaged
// upload before anything runs; install refuses a sha256 mismatch (exit
// 12, files removed). gzip cannot keep its input everywhere (-k is not in
// busybox), so after gzip the binary checks itself and sha is the
// binary's. Work files carry a unique name so concurrent runs against one
// host never share a half-written file, and the final name only ever
// appears by rename.
func (p scriptParams) installScript(upload string, codec Codec, sha string) string {
	var b strings.Builder
	p.prelude(&b)
	p.install(&b, upload, codec, sha)
	return b.String()
}

// installCmd is installScript as the one line a waiting probe (Wait)
// runs after its own prelude: B names the binary installed, which may be
// the core flavor where the probe named the full thin.
func (p scriptParams) installCmd(upload string, codec Codec, sha string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "B=\"$T\"/%s\n", shellQuote(p.Bin))
	p.install(&b, upload, codec, sha)
	// Every line is a whole command, so they join into one.
	return strings.ReplaceAll(strings.TrimSuffix(b.String(), "\n"), "\n", "; ")
}

func (p scriptParams) install(b *strings.Builder, upload string, codec Codec, sha string) {
	fmt.Fprintf(b, "U=\"$T\"/%s; W=\"$T\"/%s\n", shellQuote(upload), shellQuote(codec.unpacked(upload)))
	if unpack := codec.unpack(); unpack != "" {
		fmt.Fprintf(b, "%s -- \"$U\" || { rm -f \"$U\" \"$W\"; echo 'thin unpack failed' >&2; exit %d; }\n", unpack, exitThinChecksum)
	}
	source := "$U"
	if codec.consumes() {
		source = "$W"
	}
	keep := ""
	if p.Keep != "" {
		keep = "--keep " + shellQuote(p.Keep) + " "
	}
	install := fmt.Sprintf("\"$W\" install %s%s \"%s\" \"$B\"", keep, shellQuote(sha), source)
	if p.Sudo {
		// The job runs under sudo: install as the login user first.
		fmt.Fprintf(b, "%s || exit $?\n", install)
		p.invoke(b)
		return
	}
	p.run(b, "exec "+install+" --")
}

// wipeScript removes thin_dir; used when a run ends before the thin
// binary could do it (--wipe after a failure).
func wipeScript(thinDir string) string {
	return "rm -rf " + shellQuote(thinDir)
}
