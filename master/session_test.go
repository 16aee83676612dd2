package master

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/brinesalt/brine/internal/crypt"
)

// TestSessionKeyDamagedFile checks that a session key file left empty or
// damaged (a crash before an unsynced write reached the disk) is
// replaced by a fresh key rather than failing the sign-in, and that an
// intact file is reused as Salt's session_key reuses it.
func TestSessionKeyDamagedFile(t *testing.T) {
	m, _ := startMaster(t)
	dir := filepath.Join(m.o.CacheDir, "sessions")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{"empty": "", "garbage": "not a key\n"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name)
			if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			c, err := m.sessionKey(name)
			if err != nil {
				t.Fatalf("sessionKey: %v", err)
			}
			disk, err := crypt.ReadKeyFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if disk != c.KeyString() {
				t.Errorf("file holds %q, master uses %q", disk, c.KeyString())
			}
		})
	}
	t.Run("intact", func(t *testing.T) {
		ks, err := crypt.WriteKeyFile(filepath.Join(dir, "kept"))
		if err != nil {
			t.Fatal(err)
		}
		c, err := m.sessionKey("kept")
		if err != nil {
			t.Fatal(err)
		}
		if c.KeyString() != ks {
			t.Errorf("session key %q, file had %q", c.KeyString(), ks)
		}
	})
}
