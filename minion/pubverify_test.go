package minion

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/brinesalt/brine/internal/config"
	"github.com/brinesalt/brine/internal/crypt"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
	"github.com/brinesalt/brine/thin/frame"
)

// TestPublicationVerifiedOnlyWhenTargeted: the minion decrypts and
// matches before it checks the master's signature. A publication
// targeted at it that is forged (signed with another key) or unsigned
// is refused and runs nothing; one targeted elsewhere is dropped
// without a verification (nothing logged, nothing run), forged or not;
// the master's own signed publication runs.
func TestPublicationVerifiedOnlyWhenTargeted(t *testing.T) {
	dir := t.TempDir()
	c := config.DefaultMinion(filepath.Join(dir, "etc"))
	c.ID, c.PKIDir, c.CacheDir = "web1", filepath.Join(dir, "pki"), filepath.Join(dir, "cache")
	var logs bytes.Buffer
	var mu sync.Mutex
	ran := map[string]bool{}
	m, err := New(Options{Config: c, Log: slog.New(slog.NewTextHandler(&logs, nil)),
		Execute: func(_ context.Context, job *frame.Job) *frame.Result {
			mu.Lock()
			defer mu.Unlock()
			ran[job.JID] = true
			return &frame.Result{Return: true}
		}})
	if err != nil {
		t.Fatal(err)
	}
	master, err := crypt.GenerateKey(2048)
	if err != nil {
		t.Fatal(err)
	}
	forger, err := crypt.GenerateKey(2048)
	if err != nil {
		t.Fatal(err)
	}
	aes, err := crypt.NewCrypticle(crypt.GenerateKeyString())
	if err != nil {
		t.Fatal(err)
	}
	m.st = &authState{aes: aes, masterKey: &master.PublicKey, generation: 1}
	serial := 0
	publish := func(jid, tgt string, signer *crypt.Crypticle, algo string, forged bool) []byte {
		t.Helper()
		key := master
		serial++
		if forged {
			key = forger
		}
		p, err := crypt.WrapPublish(signer, key, ordered.FromPairs("fun", "test.ping", "arg", []any{}, "tgt", tgt,
			"tgt_type", "glob", "jid", jid, "ret", "", "user", "root"), serial, algo)
		if err != nil {
			t.Fatal(err)
		}
		b, err := protocol.Marshal(p.SaltMap())
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, c := range []struct {
		name, jid, tgt string
		algo           string
		forged, runs   bool
		refused        bool
	}{
		{"forged, targeted", "1", "web1", crypt.PKCS1v15SHA1, true, false, true},
		{"unsigned, targeted", "2", "web*", "", false, false, true},
		{"forged, elsewhere", "3", "db1", crypt.PKCS1v15SHA1, true, false, false},
		{"unsigned, elsewhere", "4", "db*", "", false, false, false},
		{"the master's, targeted", "5", "web1", crypt.PKCS1v15SHA1, false, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			logs.Reset()
			m.onPublication(ctx, publish(c.jid, c.tgt, aes, c.algo, c.forged))
			m.jobs.Wait()
			mu.Lock()
			got := ran[c.jid]
			mu.Unlock()
			if got != c.runs {
				t.Errorf("ran = %v, want %v", got, c.runs)
			}
			if refused := strings.Contains(logs.String(), "publication refused"); refused != c.refused {
				t.Errorf("refused = %v, want %v; log:\n%s", refused, c.refused, logs.String())
			}
		})
	}
}
