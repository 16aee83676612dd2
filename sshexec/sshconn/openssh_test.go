package sshconn

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/brinesalt/brine/internal/testsupport/sshtest"
	"github.com/brinesalt/brine/internal/testsupport/testhosts"
)

// startSSHD gives the test a real OpenSSH sshd, a test host of the harness,
// for compatibility checks that the in-process server cannot give: key and
// known_hosts formats as OpenSSH reads them, posix-rename, signals. The
// host's /root is private and empty, so root's login shell reads none of
// the machine's start-up files (which on a shared machine can stall for
// minutes), and the key at pubKeyPath is authorized for root there. It
// returns the host; paths on the host map to the controller with
// c.HostPath.
func startSSHD(t *testing.T, pubKeyPath string) (*testhosts.Cluster, testhosts.Host) {
	t.Helper()
	testhosts.RequireRoot(t, "root logins on a host with a private /root")
	c := testhosts.New(t, 1)
	pub, err := os.ReadFile(pubKeyPath)
	if err != nil {
		t.Fatal(err)
	}
	auth, err := c.HostPath("host1", "/root/.ssh/authorized_keys")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(auth), 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, auth, string(pub))
	h, err := c.Host("host1")
	if err != nil {
		t.Fatal(err)
	}
	return c, h
}

// hostPath maps path on host1 to the controller.
func hostPath(t *testing.T, c *testhosts.Cluster, path string) string {
	t.Helper()
	p, err := c.HostPath("host1", path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestOpenSSHCompatibility(t *testing.T) {
	priv, err := EnsureKey(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cl, h := startSSHD(t, priv+".pub")
	kh := filepath.Join(t.TempDir(), "known_hosts")
	cfg := Config{Host: h.IP, Port: h.Port, Priv: []string{priv}, HostKey: HostKeyAcceptNew,
		KnownHostsFile: kh, Timeout: 10 * time.Second}
	ctx := context.Background()
	c, err := Dial(ctx, cfg)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer c.Close()

	// OpenSSH's own client accepts the key file and the recorded host key.
	out, err := exec.Command("ssh", "-F", "/dev/null", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes",
		"-o", "UserKnownHostsFile="+kh, "-o", "IdentitiesOnly=yes", "-i", priv, "-p", strconv.Itoa(h.Port),
		"root@"+h.IP, "echo ok").CombinedOutput()
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
	host := knownhosts.Normalize(h.Addr)
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
	dst := "/var/tmp/openssh-test/sub/thin.tgz"
	if err := c.Upload(ctx, strings.NewReader("payload"), dst, 0o640, WithParents(0o700)); err != nil {
		t.Fatalf("Upload: %v", err)
	}
	if got, err := os.ReadFile(hostPath(t, cl, dst)); err != nil || string(got) != "payload" {
		t.Errorf("uploaded file = %q, %v", got, err)
	}
	assertNoTemp(t, filepath.Dir(hostPath(t, cl, dst)))

	// sshd ignores "signal" requests for root logins and does not kill a
	// pipe session's command when the channel closes; with a PTY the hangup
	// kills it. The marker the command would write after its sleep must
	// never appear.
	marker := "/var/tmp/openssh-test/marker"
	cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	_, err = c.RunWith(cctx, "sleep 1; touch "+marker, nil, nil, nil, RunOptions{PTY: true})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("cancelled Run = %v, want context.DeadlineExceeded", err)
	}
	time.Sleep(1500 * time.Millisecond)
	if _, err := os.Stat(hostPath(t, cl, marker)); err == nil {
		t.Error("remote command with a PTY kept running after ctx was cancelled")
	}
}
