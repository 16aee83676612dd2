package sshconn

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/brinesalt/brine/internal/testsupport/sshtest"
)

func TestDeployKey(t *testing.T) {
	pub := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(sshtest.GenerateKey(t).PublicKey()))) + " salt-ssh"
	other := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(sshtest.GenerateKey(t).PublicKey())))
	fields := strings.Fields(pub)
	tests := []struct {
		name     string
		existing *string // nil: no ~/.ssh at all
		want     string
	}{
		{"creates dir and file", nil, pub + "\n"},
		{"appends after a line without newline", ptr(other), other + "\n" + pub + "\n"},
		{"keeps existing keys", ptr(other + "\n"), other + "\n" + pub + "\n"},
		{"no duplicate", ptr(`command="x" ` + fields[0] + " " + fields[1] + " old comment\n"), `command="x" ` + fields[0] + " " + fields[1] + " old comment\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			f := newFixture(t, sshtest.Options{Env: []string{"HOME=" + home}})
			ak := filepath.Join(home, ".ssh", "authorized_keys")
			if tc.existing != nil {
				if err := os.MkdirAll(filepath.Dir(ak), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(ak, []byte(*tc.existing), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			c := f.dial(t)
			for range 2 { // idempotent
				if err := DeployKey(context.Background(), c, pub+"\n"); err != nil {
					t.Fatalf("DeployKey: %v", err)
				}
			}
			if got := string(mustRead(t, ak)); got != tc.want {
				t.Errorf("authorized_keys = %q, want %q", got, tc.want)
			}
			wantDir, wantFile := os.FileMode(0o700), os.FileMode(0o600)
			if tc.existing != nil {
				wantDir, wantFile = 0o755, 0o644
			}
			if st, _ := os.Stat(filepath.Dir(ak)); st.Mode().Perm() != wantDir {
				t.Errorf("~/.ssh mode = %v, want %v", st.Mode().Perm(), wantDir)
			}
			if st, _ := os.Stat(ak); st.Mode().Perm() != wantFile {
				t.Errorf("authorized_keys mode = %v, want %v", st.Mode().Perm(), wantFile)
			}
			for _, cmd := range f.srv.Commands() {
				if strings.Contains(cmd, fields[1]) {
					t.Errorf("the key travelled in the command line: %s", cmd)
				}
			}
		})
	}
	t.Run("rejects garbage", func(t *testing.T) {
		c := newFixture(t, sshtest.Options{}).dial(t)
		for _, bad := range []string{"not a key", pub + "\n" + pub} {
			if err := DeployKey(context.Background(), c, bad); err == nil {
				t.Errorf("DeployKey(%q) succeeded", bad)
			}
		}
	})
}

func ptr(s string) *string { return &s }
