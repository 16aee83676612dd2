package pki

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
)

func fuzzPub(f *testing.F) string {
	data, err := os.ReadFile(filepath.Join("..", "crypt", "testdata", "py_key.pub"))
	if err != nil {
		f.Fatal(err)
	}
	return string(data)
}

// FuzzAuthorize is a minion's _auth request as the network delivers it:
// any id, any public key text, against an autosign file line. The key
// must land, if anywhere, inside the pki directory.
func FuzzAuthorize(f *testing.F) {
	pub := fuzzPub(f)
	for _, s := range [][3]string{
		{"web1", pub, "web*"}, {"../../etc/x", pub, "*"}, {"a/b", pub, ""}, {".", pub, "."},
		{"web1", "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n", "web1"},
		{"x", "", "x["}, {"db\x00", pub, ".*"}, {"web1", strings.Replace(pub, "\n", "\r\n", -1), "(web"},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, id, pub, autosign string) {
		m := newTestMaster(t)
		signFile := filepath.Join(filepath.Dir(m.Dir), "autosign.conf")
		if err := os.WriteFile(signFile, []byte(autosign+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		out, err := m.Authorize(id, pub, ordered.New(), AuthOptions{AutosignFile: signFile})
		if err == nil && out == nil {
			t.Fatal("no outcome and no error")
		}
		onlyUnder(t, filepath.Dir(m.Dir), m.Dir, signFile)
	})
}

// FuzzKeyFile is a key file salt-key and the master read from the key
// directories: accepting, fingerprinting and printing it must refuse a
// bad key, not panic.
func FuzzKeyFile(f *testing.F) {
	f.Add(fuzzPub(f))
	f.Add("-----BEGIN RSA PUBLIC KEY-----\nMAo=\n-----END RSA PUBLIC KEY-----\n")
	f.Add("-----BEGIN PUBLIC KEY-----\n\n-----END PUBLIC KEY-----")
	f.Add("ssh-rsa AAAA")
	f.Fuzz(func(t *testing.T, data string) {
		m := newTestMaster(t)
		put(t, m, Pending, "web1", data)
		m.Accept(m.NameMatch("*", false), false, false)
		if _, err := m.FingerAll("sha256"); err != nil {
			return
		}
		m.KeyStrAll()
	})
}

// onlyUnder fails when root holds anything but dir's tree and the files
// named in extra.
func onlyUnder(t *testing.T, root, dir string, extra ...string) {
	t.Helper()
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root || p == dir || strings.HasPrefix(p, dir+string(filepath.Separator)) {
			return nil
		}
		for _, e := range extra {
			if p == e {
				return nil
			}
		}
		t.Errorf("Authorize wrote %s outside the pki directory", p)
		return nil
	})
}
