package file

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestIDNamesCache checks that names are looked up once while the
// account database is unchanged, again after it changes, and that an id
// without a name comes back as the id.
func TestIDNamesCache(t *testing.T) {
	db := filepath.Join(t.TempDir(), "group")
	if err := os.WriteFile(db, []byte("staff:x:50:\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := &idNames{file: db}
	calls := 0
	names := map[string]string{"50": "staff"}
	lookup := func(id string) (string, error) {
		calls++
		if n, ok := names[id]; ok {
			return n, nil
		}
		return "", errors.New("unknown")
	}
	for range 3 {
		if got := c.name(50, lookup); got != "staff" {
			t.Fatalf("name(50) = %v, want staff", got)
		}
	}
	if calls != 1 {
		t.Fatalf("%d lookups for an unchanged database, want 1", calls)
	}
	if got := c.name(51, lookup); got != 51 {
		t.Fatalf("name(51) = %v, want the id 51", got)
	}
	// A rewrite (as groupmod does: a new file renamed into place) drops
	// the cache.
	names["50"] = "wheel"
	tmp := db + ".new"
	if err := os.WriteFile(tmp, []byte("wheel:x:50:\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, db); err != nil {
		t.Fatal(err)
	}
	if got := c.name(50, lookup); got != "wheel" {
		t.Fatalf("name(50) after the database changed = %v, want wheel", got)
	}
	// Without a database file nothing is cached.
	os.Remove(db)
	calls = 0
	c.name(50, lookup)
	c.name(50, lookup)
	if calls != 2 {
		t.Fatalf("%d lookups without a database file, want 2", calls)
	}
}
