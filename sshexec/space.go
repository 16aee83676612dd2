package sshexec

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// freeToken starts the deploy line's report of the space left for an
// upload, in KiB: df's Available for thin_dir (see scriptParams.freeSpace).
const freeToken = "free="

// NoSpaceError is a cold host whose thin_dir has too little room for the
// thin binary: the upload and the binary unpacked beside it. Without
// this check the upload fails with SFTP's bare "Failure".
type NoSpaceError struct {
	Host, Dir        string
	FreeKiB, NeedKiB int64
	Err              error // the upload's own error, when it was tried
}

// Error reads "no space left on host1:/var/tmp/x (…)".
func (e *NoSpaceError) Error() string {
	s := fmt.Sprintf("no space left on %s:%s (%d KiB free, the thin binary needs %d KiB)", e.Host, e.Dir, e.FreeKiB, e.NeedKiB)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the upload's error, if any.
func (e *NoSpaceError) Unwrap() error { return e.Err }

// freeSpace writes the probe's cold-path lines that set F to " free=<KiB>",
// the space df reports available on thin_dir's file system (of its
// nearest existing parent when the upload is yet to make it), or to
// nothing when df is missing or its output unexpected. Only a cold host
// runs it: one df, and POSIX sh throughout (dash, busybox ash, bash).
// df -P prints one line per file system, Available being its fourth
// column after a seven-word header in the C locale, and the mount point,
// which may hold spaces, comes last, so the 11th word is Available.
func (p scriptParams) freeSpace(b *strings.Builder) {
	b.WriteString(`D=$T; while [ ! -d "$D" ]; do case $D in */*) D=${D%/*}; D=${D:-/};; *) D=.;; esac; done` + "\n")
	b.WriteString(`F=; set -f; set -- $(LC_ALL=C df -Pk "$D" 2>/dev/null); set +f; case ${11} in ''|*[!0-9]*) ;; *) F=" ` + freeToken + `${11}";; esac` + "\n")
}

// parseFree reads a deploy line's free= token.
func parseFree(f string) (int64, bool) {
	s, ok := strings.CutPrefix(f, freeToken)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil && n >= 0
}

// needKiB is the room an upload of the file at upload takes while it is
// installed: the upload and, for a compressed one, the binary unpacked
// beside it (raw), each rounded up to whole 4 KiB blocks.
func needKiB(upload, raw string) (int64, error) {
	var need int64
	paths := []string{upload}
	if raw != upload {
		paths = append(paths, raw)
	}
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return 0, fmt.Errorf("check thin size: %w", err)
		}
		need += (st.Size() + 4095) / 4096 * 4
	}
	return need, nil
}

// checkSpace refuses an upload the host reported no room for. df's
// Available leaves out the blocks a file system keeps for root, so for a
// root login a low figure only explains a failed upload (see
// explainUpload) instead of stopping one that may fit.
func checkSpace(id string, p scriptParams, line deployLine, upload, raw string) error {
	if !line.hasFree || p.LoginRoot {
		return nil
	}
	need, err := needKiB(upload, raw)
	if err != nil || line.freeKiB >= need {
		return nil // only a check; the upload will tell
	}
	return &NoSpaceError{Host: id, Dir: p.ThinDir, FreeKiB: line.freeKiB, NeedKiB: need}
}

// explainUpload turns a failed upload to a host that reported less room
// than it needs into a NoSpaceError carrying the upload's error.
func explainUpload(id string, p scriptParams, line deployLine, upload, raw string, err error) error {
	if !line.hasFree {
		return err
	}
	need, nerr := needKiB(upload, raw)
	if nerr != nil || line.freeKiB >= need {
		return err
	}
	return &NoSpaceError{Host: id, Dir: p.ThinDir, FreeKiB: line.freeKiB, NeedKiB: need, Err: err}
}
