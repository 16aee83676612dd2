package pkgtest

import (
	"embed"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

//go:embed testdata/db_setup
var dbSetup embed.FS

// DBSetup is the seeds' db_setup.sls laid out as a file_roots tree with
// unique names: two packages in an apt repository, an init script, and a
// scratch directory for the managed file and the init marker.
type DBSetup struct {
	// SaltRoot is the file_roots directory holding db_setup/init.sls.
	SaltRoot string
	// Root is the scratch directory (@ROOT@ in the SLS).
	Root     string
	Packages []string
	Service  *InitScript
	Repo     *AptRepo
}

// NewDBSetup prepares the fixture; it skips unless the host can run the
// real apt and SysV tests.
func NewDBSetup(t testing.TB) *DBSetup {
	t.Helper()
	repo := NewAptRepo(t)
	prefix := UniqueName("brinetest-") + "-db"
	d := &DBSetup{SaltRoot: t.TempDir(), Root: t.TempDir(), Repo: repo,
		Packages: []string{prefix + "-server", prefix + "-client"}}
	d.Service = InstallNamedInitScript(t, prefix)
	for _, p := range d.Packages {
		repo.Add(p, "1.0-1")
	}
	for _, f := range []string{"db_setup.sls", "db.conf.jinja"} {
		b, err := dbSetup.ReadFile("testdata/db_setup/" + f)
		if err != nil {
			t.Fatal(err)
		}
		s := strings.ReplaceAll(strings.ReplaceAll(string(b), "@ROOT@", d.Root), "brinetest-db", prefix)
		if f == "db_setup.sls" {
			f = "init.sls"
		}
		write(t, filepath.Join(d.SaltRoot, "db_setup", f), s)
	}
	return d
}

// SetTemplate rewrites the config template, so that the next run
// changes the managed file.
func (d *DBSetup) SetTemplate(t testing.TB, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(d.SaltRoot, "db_setup", "db.conf.jinja"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
