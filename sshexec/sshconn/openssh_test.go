package sshconn

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/sshtest"
)

// startSSHD runs the system's OpenSSH sshd on a loopback port for
// compatibility checks that the in-process server cannot give: key and
// known_hosts formats as OpenSSH reads them, posix-rename, signals. It is
// opt-in (BRINE_SSHD_TEST=1) because commands run through root's login
// shell, whose start-up files on a shared machine can stall for minutes,
// and it needs root and an installed sshd.
func startSSHD(t *testing.T, pubKeyPath string) (port int, hostKeyPath string) {
	t.Helper()
	if os.Getenv("BRINE_SSHD_TEST") != "1" || os.Geteuid() != 0 {
		t.Skip("set BRINE_SSHD_TEST=1 and run as root to test against the system's sshd")
	}
	sshd, err := exec.LookPath("sshd")
	if err != nil {
		sshd = "/usr/sbin/sshd"
	}
	if _, err := os.Stat(sshd); err != nil {
		t.Skip("sshd not installed")
	}
	dir := t.TempDir()
	hostKeyPath = filepath.Join(dir, "host_ed25519")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", hostKeyPath).CombinedOutput(); err != nil {
		t.Skipf("ssh-keygen: %v: %s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port = ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cfg := filepath.Join(dir, "sshd_config")
	writeFile(t, cfg, fmt.Sprintf(`ListenAddress 127.0.0.1:%d
HostKey %s
PidFile none
AuthorizedKeysFile %s
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
Subsystem sftp internal-sftp
LogLevel ERROR
`, port, hostKeyPath, pubKeyPath))
	var logs bytes.Buffer
	cmd := exec.Command(sshd, "-D", "-e", "-f", cfg)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Skipf("start sshd: %v", err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("sshd log:\n%s", logs.String())
		}
	})
	for deadline := time.Now().Add(5 * time.Second); ; {
		c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err == nil {
			c.Close()
			return port, hostKeyPath + ".pub"
		}
		if time.Now().After(deadline) {
			t.Skipf("sshd did not start: %s", logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestOpenSSHCompatibility(t *testing.T) {
	priv, err := EnsureKey(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	port, _ := startSSHD(t, priv+".pub")
	kh := filepath.Join(t.TempDir(), "known_hosts")
	cfg := Config{Host: "127.0.0.1", Port: port, Priv: []string{priv}, HostKey: HostKeyAcceptNew,
		KnownHostsFile: kh, Timeout: 10 * time.Second}
	ctx := context.Background()
	c, err := Dial(ctx, cfg)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer c.Close()

	// OpenSSH's own client accepts the key file and the recorded host key.
	out, err := exec.Command("ssh", "-F", "/dev/null", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes",
		"-o", "UserKnownHostsFile="+kh, "-o", "IdentitiesOnly=yes", "-i", priv, "-p", strconv.Itoa(port),
		"root@127.0.0.1", "echo ok").CombinedOutput()
	if lines := strings.Split(strings.TrimSpace(string(out)), "\n"); err != nil || lines[len(lines)-1] != "ok" {
		t.Errorf("ssh with our key and known_hosts: %v: %s", err, out)
	}

	stranger := cfg
	stranger.Priv = []string{keyFile(t)}
	if _, err := Dial(ctx, stranger); !errors.Is(err, ErrAuthFailed) {
		t.Errorf("Dial with an unauthorized key = %v, want ErrAuthFailed", err)
	}
	many := cfg
	for range 8 { // more than sshd's MaxAuthTries (6)
		many.Signers = append(many.Signers, sshtest.GenerateKey(t))
	}
	many.Priv = nil
	if _, err := Dial(ctx, many); !errors.Is(err, ErrAuthFailed) {
		t.Errorf("Dial with too many keys = %v, want ErrAuthFailed", err)
	}

	hashed := cfg
	hashed.KnownHostsFile, hashed.HashKnownHosts = filepath.Join(t.TempDir(), "known_hosts"), true
	hc, err := Dial(ctx, hashed)
	if err != nil {
		t.Fatalf("Dial recording hashed: %v", err)
	}
	hc.Close()
	host := fmt.Sprintf("[127.0.0.1]:%d", port)
	if out, err := exec.Command("ssh-keygen", "-F", host, "-f", hashed.KnownHostsFile).CombinedOutput(); err != nil {
		t.Errorf("ssh-keygen -F %s finds no hashed entry: %v: %s", host, err, out)
	}

	if code, err := c.Run(ctx, "exit 7", nil, nil, nil); code != 7 || err != nil {
		t.Errorf("Run exit 7 = %d, %v", code, err)
	}
	_, err = c.Run(ctx, "kill -KILL $$", nil, nil, nil)
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Signal != "KILL" {
		t.Errorf("Run kill = %v, want *ExitError{Signal: KILL}", err)
	}

	s, err := c.SFTP()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.HasExtension("posix-rename@openssh.com"); !ok {
		t.Error("OpenSSH does not advertise posix-rename")
	}
	dst := filepath.Join(t.TempDir(), "sub", "thin.tgz")
	if err := c.Upload(ctx, strings.NewReader("payload"), dst, 0o640, WithParents(0o700)); err != nil {
		t.Fatalf("Upload: %v", err)
	}
	if got, err := os.ReadFile(dst); err != nil || string(got) != "payload" {
		t.Errorf("uploaded file = %q, %v", got, err)
	}
	assertNoTemp(t, filepath.Dir(dst))

	// sshd ignores "signal" requests for root logins and does not kill a
	// pipe session's command when the channel closes; with a PTY the hangup
	// kills it. The marker the command would write after its sleep must
	// never appear.
	marker := filepath.Join(t.TempDir(), "marker")
	cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	_, err = c.RunWith(cctx, "sleep 1; touch "+marker, nil, nil, nil, RunOptions{PTY: true})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("cancelled Run = %v, want context.DeadlineExceeded", err)
	}
	time.Sleep(1500 * time.Millisecond)
	if _, err := os.Stat(marker); err == nil {
		t.Error("remote command with a PTY kept running after ctx was cancelled")
	}
}
