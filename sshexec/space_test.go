package sshexec

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brinesalt/brine/internal/testsupport/testhosts"
)

// TestProbeReportsFreeSpace runs a cold probe under each shell there is
// with a stand-in df, and reads the Available column whatever df's
// header or mount point looks like; a df that fails or prints something
// else gives no free= token, and the probe never loops on a thin_dir
// whose parents are missing or that is relative.
func TestProbeReportsFreeSpace(t *testing.T) {
	base := t.TempDir()
	for _, tt := range []struct {
		name, df, thinDir string
		want              int64 // -1: no report
	}{
		{"gnu", "Filesystem     1024-blocks    Used Available Capacity Mounted on\n/dev/sda1         10000000 5000000   4321000      54% /\n", "/x/y/z", 4321000},
		{"busybox", "Filesystem           1024-blocks    Used Available Capacity Mounted on\ntmpfs                     1024      1024         0 100% /var/tmp/my dir\n", "/var/tmp/my dir/thin", 0},
		{"missing parents", "Filesystem 1024-blocks Used Available Capacity Mounted on\nx 10 5 5 50% /\n", base + "/a/b/c/d", 5},
		{"relative", "Filesystem 1024-blocks Used Available Capacity Mounted on\nx 10 5 7 50% /\n", "rel/thin", 7},
		{"garbage", "df: unknown option\n", "/x", -1},
		{"not a number", "Filesystem 1024-blocks Used Available Capacity Mounted on\nx 10 5 - 50% /\n", "/x", -1},
	} {
		bin := filepath.Join(t.TempDir(), "bin")
		os.Mkdir(bin, 0o755)
		script := "#!/bin/sh\n[ \"$1\" = -Pk ] || exit 2\ncat <<'EOF'\n" + tt.df + "EOF\n"
		if err := os.WriteFile(filepath.Join(bin, "df"), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, sh := range []string{"bash", "dash", "sh"} {
			path, err := exec.LookPath(sh)
			if err != nil {
				continue
			}
			p := scriptParams{ThinDir: tt.thinDir, Bin: "salt-thin-f", Umask: -1}
			cmd := exec.Command(path, "-c", p.probeScript())
			cmd.Dir = base
			cmd.Env = []string{"PATH=" + bin + ":/usr/bin:/bin"}
			out, _ := cmd.Output()
			line, err := parseDeployLine(string(out))
			if err != nil {
				t.Errorf("%s %s: %v (output %q)", tt.name, sh, err, out)
				continue
			}
			got := int64(-1)
			if line.hasFree {
				got = line.freeKiB
			}
			if got != tt.want {
				t.Errorf("%s %s: free = %d, want %d (output %q)", tt.name, sh, got, tt.want, out)
			}
		}
	}
}

// TestProbeRealDF: with the system's df, a cold probe reports some room
// for a thin_dir yet to be made, under each shell.
func TestProbeRealDF(t *testing.T) {
	if _, err := exec.LookPath("df"); err != nil {
		testhosts.Skip(t, "no df (coreutils)")
	}
	p := scriptParams{ThinDir: filepath.Join(t.TempDir(), "thin"), Bin: "salt-thin-f", Umask: -1, Wait: true}
	for _, sh := range []string{"bash", "dash", "sh"} {
		path, err := exec.LookPath(sh)
		if err != nil {
			continue
		}
		cmd := exec.Command(path, "-c", p.probeScript())
		cmd.Stdin = strings.NewReader("{}\n")
		out, _ := cmd.Output()
		line, err := parseDeployLine(string(out))
		if err != nil || !line.hasFree || !strings.HasSuffix(strings.TrimSpace(string(out)), " "+waitToken) {
			t.Errorf("%s: %+v, %v from %q", sh, line, err, out)
		}
	}
}

// TestCheckSpace: an upload the host has no room for (the upload and
// the binary unpacked beside it) is refused up front with the host and
// thin_dir named, except for a root login, whose failed upload is then
// explained instead; a host that did not report, or has room, is let be.
func TestCheckSpace(t *testing.T) {
	dir := t.TempDir()
	up, raw := filepath.Join(dir, "thin.zst"), filepath.Join(dir, "thin")
	os.WriteFile(up, make([]byte, 5000), 0o600) // 8 KiB in 4 KiB blocks
	os.WriteFile(raw, make([]byte, 12288), 0o600)
	p := scriptParams{ThinDir: "/var/tmp/t"}
	need := int64(8 + 12)
	var nse *NoSpaceError
	err := checkSpace("web1", p, deployLine{hasFree: true, freeKiB: need - 1}, up, raw)
	if !errors.As(err, &nse) || nse.NeedKiB != need || !strings.HasPrefix(err.Error(), "no space left on web1:/var/tmp/t (") {
		t.Errorf("short by 1 KiB: %v", err)
	}
	for name, line := range map[string]deployLine{"room": {hasFree: true, freeKiB: need}, "no report": {}} {
		if err := checkSpace("web1", p, line, up, raw); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := checkSpace("web1", p, deployLine{hasFree: true, freeKiB: 12}, raw, raw); err != nil {
		t.Errorf("raw upload of 12 KiB counted twice: %v", err)
	}
	root := p
	root.LoginRoot = true
	if err := checkSpace("web1", root, deployLine{hasFree: true}, up, raw); err != nil {
		t.Errorf("root login refused up front: %v", err)
	}
	sftpErr := errors.New(`sftp: "Failure" (SSH_FX_FAILURE)`)
	err = explainUpload("web1", root, deployLine{hasFree: true}, up, raw, sftpErr)
	if !errors.As(err, &nse) || !errors.Is(err, sftpErr) || !strings.Contains(err.Error(), "no space left on web1:/var/tmp/t") {
		t.Errorf("failed upload on a full disk: %v", err)
	}
	if err := explainUpload("web1", root, deployLine{hasFree: true, freeKiB: 1 << 20}, up, raw, sftpErr); err != sftpErr {
		t.Errorf("failed upload with room: %v", err)
	}
}
