package thin

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestInstallRemovesStaleUploads: an install clears the upload
// temporaries a killed salt-ssh left in thin_dir once they have gone
// staleUpload unwritten, and keeps fresh ones (a concurrent run still
// uploading or installing), other builds' temporaries that are fresh,
// the kept full thin and files that are not salt-ssh's.
func TestInstallRemovesStaleUploads(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-staleUpload - time.Minute)
	files := map[string]bool{ // name → stale
		".salt-thin-aaaa.up-1764620000000000000.zst.tmp-0123456789ab": true,
		".salt-thin-aaaa.up-1764620000000000001.gz.tmp-0123456789ab":  true,
		".salt-thin-core-aaaa.up-17.tmp-abcdef":                       true,
		"salt-thin-aaaa.up-1764620000000000002.zst":                   true,
		"salt-thin-aaaa.up-1764620000000000002":                       true,
		".salt-thin-bbbb.up-1764620000000000003.zst.tmp-fedcba987654": false,
		"salt-thin-bbbb.up-1764620000000000004.zst":                   false,
		".other.tmp-123":          true,
		"salt-thin-aaaa.conf":     true,
		"running_data.up-1.tmp-x": true,
	}
	for name, stale := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if stale {
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, name := range []string{"salt-thin-new", "salt-thin-oldbuild", "salt-thin-keep"} {
		os.WriteFile(filepath.Join(dir, name), []byte("bin"), 0o700)
	}
	os.Mkdir(filepath.Join(dir, ".salt-thin-dir.up-1.tmp-x"), 0o700)
	os.Chtimes(filepath.Join(dir, ".salt-thin-dir.up-1.tmp-x"), old, old)

	removeOtherBuilds(filepath.Join(dir, "salt-thin-new"), "salt-thin-keep")

	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	want := []string{
		".other.tmp-123",
		".salt-thin-bbbb.up-1764620000000000003.zst.tmp-fedcba987654",
		".salt-thin-dir.up-1.tmp-x",
		"running_data.up-1.tmp-x",
		"salt-thin-aaaa.conf",
		"salt-thin-bbbb.up-1764620000000000004.zst",
		"salt-thin-keep",
		"salt-thin-new",
	}
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("thin_dir after install (-want +got):\n%s", diff)
	}
}
