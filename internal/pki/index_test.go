package pki

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
)

// settle makes the key directories' mtimes old enough for their
// listings to be kept in the index, as they are on a master whose keys
// have not changed for a while.
func settle(t *testing.T, m *Master) {
	t.Helper()
	old := time.Now().Add(-time.Hour)
	for _, s := range States {
		if err := os.Chtimes(filepath.Join(m.Dir, s), old, old); err != nil {
			t.Fatal(err)
		}
	}
}

// TestIndexSeesOutsideChanges checks that the master's listings follow
// changes made to the key directories behind its back (salt-key in
// another process, an administrator's mv), whether the previous listing
// was kept in the index or taken in the same instant as the change.
func TestIndexSeesOutsideChanges(t *testing.T) {
	keyA := readPub(t, "go_key.pub")
	steps := []struct {
		name   string
		change func(t *testing.T, m *Master)
		want   map[string][]string
	}{
		{"add pending", func(t *testing.T, m *Master) { put(t, m, Pending, "new", keyA) },
			map[string][]string{Accepted: {"a1", "B2"}, Pending: {"new"}}},
		{"accept by rename", func(t *testing.T, m *Master) {
			if err := os.Rename(m.Path(Pending, "new"), m.Path(Accepted, "new")); err != nil {
				t.Fatal(err)
			}
		}, map[string][]string{Accepted: {"a1", "B2", "new"}}},
		{"delete", func(t *testing.T, m *Master) {
			if err := os.Remove(m.Path(Accepted, "a1")); err != nil {
				t.Fatal(err)
			}
		}, map[string][]string{Accepted: {"B2", "new"}}},
		{"hidden and directory entries stay out", func(t *testing.T, m *Master) {
			put(t, m, Accepted, ".tmp", keyA)
			if err := os.Mkdir(m.Path(Accepted, "sub"), 0o700); err != nil {
				t.Fatal(err)
			}
		}, map[string][]string{Accepted: {"B2", "new"}}},
		{"symlink to a key", func(t *testing.T, m *Master) {
			put(t, m, Rejected, "target", keyA)
			if err := os.Symlink(m.Path(Rejected, "target"), m.Path(Accepted, "link")); err != nil {
				t.Fatal(err)
			}
		}, map[string][]string{Accepted: {"B2", "link", "new"}, Rejected: {"target"}}},
		{"symlink target removed", func(t *testing.T, m *Master) {
			if err := os.Remove(m.Path(Rejected, "target")); err != nil {
				t.Fatal(err)
			}
		}, map[string][]string{Accepted: {"B2", "new"}}},
	}
	for _, settled := range []bool{true, false} {
		t.Run(fmt.Sprintf("settled=%v", settled), func(t *testing.T) {
			m := newTestMaster(t)
			put(t, m, Accepted, "a1", keyA)
			put(t, m, Accepted, "B2", keyA)
			for _, st := range steps {
				if settled {
					settle(t, m)
				}
				m.ListKeys() // the listing the index may keep
				st.change(t, m)
				got := map[string][]string{}
				for _, g := range m.ListKeys() {
					if len(g.Keys) > 0 {
						got[g.State] = g.Keys
					}
				}
				if d := cmp.Diff(st.want, got); d != "" {
					t.Fatalf("%s: listing (-want +got):\n%s", st.name, d)
				}
			}
		})
	}
}

// TestIndexSharedWithSaltKey checks both directions between a running
// master's pki (its index warm) and a salt-key instance on the same
// pki_dir: keys the master accepts on sign-in are listed by salt-key,
// and salt-key's accept and delete are seen by the master.
func TestIndexSharedWithSaltKey(t *testing.T) {
	keyA := readPub(t, "go_key.pub")
	master := newTestMaster(t)
	saltKey := NewMaster(master.Dir)
	for i := range 3 {
		if _, err := master.Authorize(fmt.Sprintf("m%d", i), keyA, ordered.New(), AuthOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	settle(t, master)
	master.ListKeys()
	if got := saltKey.ListKeys().Get(Pending); !cmp.Equal(got, []string{"m0", "m1", "m2"}) {
		t.Fatalf("salt-key pending = %v", got)
	}
	saltKey.Accept(Listing{{State: Pending, Keys: []string{"m1"}}}, false, false)
	if got := master.ListKeys().Get(Accepted); !cmp.Equal(got, []string{"m1"}) {
		t.Errorf("master accepted after salt-key -a = %v", got)
	}
	settle(t, master)
	master.ListKeys()
	saltKey.Delete(Listing{{State: Pending, Keys: []string{"m0"}}})
	if got := master.ListKeys().Get(Pending); !cmp.Equal(got, []string{"m2"}) {
		t.Errorf("master pending after salt-key -d = %v", got)
	}
}

// TestAuthorizeConcurrent signs in many minions at once, some twice,
// and checks every key lands in minions/ exactly once with its content.
func TestAuthorizeConcurrent(t *testing.T) {
	keyA := readPub(t, "go_key.pub")
	m := newTestMaster(t)
	const n = 64
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for i := range 2 * n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := m.Authorize(fmt.Sprintf("m%02d", i%n), keyA, ordered.New(), AuthOptions{AutoAccept: true})
			if err == nil && !out.Accepted {
				err = fmt.Errorf("m%02d not accepted: %+v", i%n, out)
			}
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	got := m.ListKeys().Get(Accepted)
	if len(got) != n {
		t.Fatalf("%d accepted keys, want %d", len(got), n)
	}
	for _, id := range got {
		if data, err := os.ReadFile(m.Path(Accepted, id)); err != nil || string(data) != keyA {
			t.Errorf("%s: %q, %v", id, data, err)
		}
	}
	ents, _ := os.ReadDir(filepath.Join(m.Dir, Accepted))
	if len(ents) != n {
		t.Errorf("%d entries in minions/ (temporary files left?)", len(ents))
	}
}
