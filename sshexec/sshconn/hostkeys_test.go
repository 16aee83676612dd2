package sshconn

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/brinesalt/brine/internal/testsupport/sshtest"
)

func TestHostKeyModes(t *testing.T) {
	type known int
	const (
		knownNone  known = iota // known_hosts file absent
		knownSame               // holds the server's key
		knownOther              // holds another key for the same host
	)
	tests := []struct {
		name      string
		mode      HostKeyMode
		known     known
		wantErr   error
		wantLines int // known_hosts lines after the dial; -1: file absent
	}{
		{"strict unknown", HostKeyStrict, knownNone, ErrHostKeyUnknown, -1},
		{"strict known", HostKeyStrict, knownSame, nil, 1},
		{"strict changed", HostKeyStrict, knownOther, ErrHostKeyMismatch, 1},
		{"accept-new unknown records", HostKeyAcceptNew, knownNone, nil, 1},
		{"accept-new known", HostKeyAcceptNew, knownSame, nil, 1},
		{"accept-new changed refused", HostKeyAcceptNew, knownOther, ErrHostKeyMismatch, 1},
		{"ignore unknown", HostKeyIgnore, knownNone, nil, -1},
		{"ignore changed", HostKeyIgnore, knownOther, nil, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, sshtest.Options{})
			f.cfg.HostKey = tc.mode
			kh := filepath.Join(t.TempDir(), "ssh", "known_hosts")
			f.cfg.KnownHostsFile = kh
			switch tc.known {
			case knownSame:
				writeFile(t, kh, f.srv.KnownHostsLine())
			case knownOther:
				other := sshtest.GenerateKey(t).PublicKey()
				writeFile(t, kh, "# comment\n"+knownhosts.Line([]string{f.srv.Addr()}, other)+"\n")
			}
			c, err := Dial(context.Background(), f.cfg)
			if c != nil {
				c.Close()
			}
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Fatalf("Dial error = %v, want %v", err, tc.wantErr)
			}
			if got := countLines(t, kh); got != tc.wantLines {
				t.Errorf("known_hosts lines = %d, want %d", got, tc.wantLines)
			}
			if err == nil && tc.mode == HostKeyAcceptNew {
				// What was recorded now passes strict checking.
				f.cfg.HostKey = HostKeyStrict
				f.dial(t)
			}
		})
	}
}

func TestHostKeyErrorMessages(t *testing.T) {
	f := newFixture(t, sshtest.Options{})
	kh := filepath.Join(t.TempDir(), "known_hosts")
	f.cfg.KnownHostsFile = kh
	_, err := Dial(context.Background(), f.cfg)
	var hk *HostKeyError
	if !errors.As(err, &hk) || hk.Err != ErrHostKeyUnknown {
		t.Fatalf("Dial error = %v, want unknown *HostKeyError", err)
	}
	if !strings.Contains(err.Error(), "The host key needs to be accepted, to auto accept run salt-ssh with the -i flag") {
		t.Errorf("unknown-key message lacks Salt's wording: %v", err)
	}

	other := sshtest.GenerateKey(t).PublicKey()
	writeFile(t, kh, "# first\n\n"+knownhosts.Line([]string{f.srv.Addr()}, other)+"\n")
	f.cfg.HostKey = HostKeyAcceptNew
	_, err = Dial(context.Background(), f.cfg)
	if !errors.As(err, &hk) || hk.Err != ErrHostKeyMismatch {
		t.Fatalf("Dial error = %v, want mismatch *HostKeyError", err)
	}
	host := fmt.Sprintf("[127.0.0.1]:%d", f.srv.Port())
	for _, want := range []string{host, ssh.FingerprintSHA256(f.srv.HostKey()), kh + ":3", "ssh-keygen -R"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("mismatch message lacks %q: %v", want, err)
		}
	}
	if hk.Line != 3 || hk.Host != host {
		t.Errorf("HostKeyError Line, Host = %d, %q; want 3, %q", hk.Line, hk.Host, host)
	}
}

// A server with RSA and ed25519 host keys must be checked against the key
// type known_hosts holds, whichever x/crypto would prefer by default.
func TestHostKeyAlgorithmsFollowKnownHosts(t *testing.T) {
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	rsaSigner, err := ssh.NewSignerFromKey(rsaKey)
	if err != nil {
		t.Fatal(err)
	}
	edSigner := sshtest.GenerateKey(t)
	for _, known := range []ssh.Signer{rsaSigner, edSigner} {
		t.Run(known.PublicKey().Type(), func(t *testing.T) {
			f := newFixture(t, sshtest.Options{HostKey: edSigner, ExtraHostKeys: []ssh.Signer{rsaSigner}})
			writeFile(t, f.cfg.KnownHostsFile, knownhosts.Line([]string{f.srv.Addr()}, known.PublicKey())+"\n")
			f.dial(t)
		})
	}
}

func TestConcurrentRecording(t *testing.T) {
	const hosts = 50
	kh := filepath.Join(t.TempDir(), "known_hosts")
	writeFile(t, kh, "# no trailing newline")
	cfgs := make([]Config, hosts)
	for i := range cfgs {
		f := newFixture(t, sshtest.Options{})
		f.cfg.KnownHostsFile, f.cfg.HostKey = kh, HostKeyAcceptNew
		cfgs[i] = f.cfg
	}
	// Each host is dialled twice at once: the second must not duplicate.
	var wg sync.WaitGroup
	errs := make(chan error, 2*hosts)
	for _, cfg := range append(cfgs, cfgs...) {
		wg.Go(func() {
			c, err := Dial(context.Background(), cfg)
			if err != nil {
				errs <- err
				return
			}
			c.Close()
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("Dial: %v", err)
	}

	data, err := os.ReadFile(kh)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != hosts+1 {
		t.Fatalf("known_hosts has %d lines, want %d:\n%s", len(lines), hosts+1, data)
	}
	for _, l := range lines[1:] {
		if _, _, _, _, _, err := ssh.ParseKnownHosts([]byte(l)); err != nil || !strings.HasPrefix(l, "[127.0.0.1]:") {
			t.Errorf("malformed line %q: %v", l, err)
		}
	}
	for _, cfg := range cfgs {
		cfg.HostKey = HostKeyStrict
		c, err := Dial(context.Background(), cfg)
		if err != nil {
			t.Fatalf("strict Dial after recording: %v", err)
		}
		c.Close()
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// countLines counts non-comment lines; -1 when the file is absent.
func countLines(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return -1
	}
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, l := range bytes.Split(data, []byte("\n")) {
		if len(l) > 0 && l[0] != '#' {
			n++
		}
	}
	return n
}

// Several salt-ssh processes recording the same hosts into one file must
// not interleave lines or record a host twice (flock plus re-read).
func TestRecordingAcrossProcesses(t *testing.T) {
	const hosts, procs = 20, 3
	dir := t.TempDir()
	keyPath := keyFile(t)
	signers, err := LoadSigners([]string{keyPath}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kh := filepath.Join(dir, "known_hosts")
	var ports []string
	for range hosts {
		f := newFixture(t, sshtest.Options{AuthorizedKeys: []ssh.PublicKey{signers[0].PublicKey()}})
		ports = append(ports, strconv.Itoa(f.srv.Port()))
	}
	var cmds []*exec.Cmd
	for range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperRecord$", "-test.count=1")
		cmd.Env = append(os.Environ(), "SSHCONN_HELPER_KNOWN_HOSTS="+kh,
			"SSHCONN_HELPER_KEY="+keyPath, "SSHCONN_HELPER_PORTS="+strings.Join(ports, ","))
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("helper output:\n%s", out.String())
			}
		})
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("helper process: %v", err)
		}
	}
	if got := countLines(t, kh); got != hosts {
		data, _ := os.ReadFile(kh)
		t.Fatalf("known_hosts has %d lines, want %d:\n%s", got, hosts, data)
	}
}

// TestHelperRecord is the child of TestRecordingAcrossProcesses.
func TestHelperRecord(t *testing.T) {
	kh := os.Getenv("SSHCONN_HELPER_KNOWN_HOSTS")
	if kh == "" {
		t.Skip("helper process only")
	}
	var wg sync.WaitGroup
	for _, p := range strings.Split(os.Getenv("SSHCONN_HELPER_PORTS"), ",") {
		port, _ := strconv.Atoi(p)
		wg.Go(func() {
			c, err := Dial(context.Background(), Config{
				Host: "127.0.0.1", Port: port, Priv: []string{os.Getenv("SSHCONN_HELPER_KEY")},
				HostKey: HostKeyAcceptNew, KnownHostsFile: kh,
			})
			if err != nil {
				t.Error(err)
				return
			}
			c.Close()
		})
	}
	wg.Wait()
}

func TestHashKnownHosts(t *testing.T) {
	f := newFixture(t, sshtest.Options{})
	f.cfg.KnownHostsFile = filepath.Join(t.TempDir(), "known_hosts")
	f.cfg.HostKey, f.cfg.HashKnownHosts = HostKeyAcceptNew, true
	f.dial(t)
	data, err := os.ReadFile(f.cfg.KnownHostsFile)
	if err != nil || !strings.HasPrefix(string(data), "|1|") || strings.Contains(string(data), "127.0.0.1") {
		t.Fatalf("known_hosts = %q, %v; want one hashed entry", data, err)
	}
	f.cfg.HostKey = HostKeyStrict
	f.dial(t)
	if got := countLines(t, f.cfg.KnownHostsFile); got != 1 {
		t.Errorf("known_hosts lines = %d, want 1", got)
	}
}
