package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/crypt"
	"github.com/brinesalt/brine/internal/pki"
)

type env struct {
	t        *testing.T
	confDir  string
	pkiDir   string
	pub, alt string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	dir := t.TempDir()
	e := &env{t: t, confDir: filepath.Join(dir, "etc"), pkiDir: filepath.Join(dir, "pki")}
	must(t, os.MkdirAll(e.confDir, 0o755))
	conf := "pki_dir: " + e.pkiDir + "\ncachedir: " + filepath.Join(dir, "cache") + "\n"
	must(t, os.WriteFile(filepath.Join(e.confDir, "master"), []byte(conf), 0o644))
	must(t, os.MkdirAll(filepath.Join(dir, "cache"), 0o755))
	for _, d := range pki.States {
		must(t, os.MkdirAll(filepath.Join(e.pkiDir, d), 0o700))
	}
	pub, err := os.ReadFile("../../internal/crypt/testdata/go_key.pub")
	must(t, err)
	alt, err := os.ReadFile("../../internal/crypt/testdata/py_key.pub")
	must(t, err)
	e.pub, e.alt = crypt.CleanKey(string(pub)), crypt.CleanKey(string(alt))
	must(t, os.WriteFile(filepath.Join(e.pkiDir, "master.pub"), pub, 0o644))
	return e
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func (e *env) key(state, id, pub string) {
	must(e.t, os.WriteFile(filepath.Join(e.pkiDir, state, id), []byte(pub), 0o644))
}

func (e *env) run(stdin string, args ...string) (string, string, int) {
	var out, errb bytes.Buffer
	args = append([]string{"-c", e.confDir}, args...)
	code := run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), code
}

func (e *env) states(id string) []string {
	var out []string
	for _, s := range pki.States {
		if _, err := os.Stat(filepath.Join(e.pkiDir, s, id)); err == nil {
			out = append(out, s)
		}
	}
	return out
}

func TestList(t *testing.T) {
	e := newEnv(t)
	e.key(pki.Accepted, "web1", e.pub)
	e.key(pki.Pending, "db1", e.pub)
	e.key(pki.Pending, "App1", e.pub)
	e.key(pki.Rejected, "bad", e.pub)
	e.key(pki.Denied, "web1", e.alt)
	tests := []struct {
		args []string
		want string
	}{
		{nil, "Accepted Keys:\nweb1\nDenied Keys:\nweb1\nUnaccepted Keys:\nApp1\ndb1\nRejected Keys:\nbad\n"},
		{[]string{"-L"}, "Accepted Keys:\nweb1\nDenied Keys:\nweb1\nUnaccepted Keys:\nApp1\ndb1\nRejected Keys:\nbad\n"},
		{[]string{"-l", "un"}, "Unaccepted Keys:\nApp1\ndb1\n"},
		{[]string{"--list", "acc"}, "Accepted Keys:\nweb1\n"},
		{[]string{"-l", "rejected"}, "Rejected Keys:\nbad\n"},
		{[]string{"-l", "den"}, "Denied Keys:\nweb1\n"},
		{[]string{"-L", "--out", "json"}, `{
    "minions": [
        "web1"
    ],
    "minions_pre": [
        "App1",
        "db1"
    ],
    "minions_rejected": [
        "bad"
    ],
    "minions_denied": [
        "web1"
    ]
}
`},
		{[]string{"-l", "acc", "--force-color"}, "\x1b[0;1;32mAccepted Keys:\x1b[0;0m\n\x1b[0;32mweb1\x1b[0;0m\n"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			out, errs, code := e.run("", tc.args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			if d := cmp.Diff(tc.want, out); d != "" {
				t.Errorf("output (-want +got):\n%s", d)
			}
		})
	}
}

func TestUsageErrors(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-l", "bogus"}, "salt-key: error: 'bogus' is not a valid argument to '--list'\n"},
		{[]string{"--gen-keys", "x", "--keysize", "1024"}, "salt-key: error: The minimum value for keysize is 2048\n"},
		{[]string{"--gen-keys", "x", "--keysize", "40000"}, "salt-key: error: The maximum value for keysize is 32768\n"},
	}
	for _, tc := range tests {
		_, errs, code := e.run("", tc.args...)
		if code != 2 || !strings.HasSuffix(errs, tc.want) {
			t.Errorf("%v: exit %d, stderr %q", tc.args, code, errs)
		}
	}
}

func TestAccept(t *testing.T) {
	e := newEnv(t)
	e.key(pki.Pending, "web1", e.pub)
	e.key(pki.Pending, "web2", e.pub)
	e.key(pki.Pending, "db1", e.pub)
	e.key(pki.Rejected, "web3", e.pub)

	out, _, _ := e.run("n\n", "-a", "web*")
	want := "The following keys are going to be accepted:\nUnaccepted Keys:\nweb1\nweb2\nProceed? [n/Y] "
	if d := cmp.Diff(want, out); d != "" {
		t.Errorf("declined (-want +got):\n%s", d)
	}
	if got := e.states("web1"); !cmp.Equal(got, []string{pki.Pending}) {
		t.Errorf("declined accept moved web1 to %v", got)
	}

	out, _, _ = e.run("\n", "-a", "web*")
	want += "Key for minion web1 accepted.\nKey for minion web2 accepted.\n"
	if d := cmp.Diff(want, out); d != "" {
		t.Errorf("accepted (-want +got):\n%s", d)
	}
	if got := e.states("web2"); !cmp.Equal(got, []string{pki.Accepted}) {
		t.Errorf("web2 in %v", got)
	}

	out, _, _ = e.run("", "-a", "web3", "-y")
	if want := "The key glob 'web3' does not match any unaccepted keys.\n"; out != want {
		t.Errorf("no match: %q", out)
	}
	out, _, _ = e.run("", "-a", "web3", "--include-rejected", "-y")
	want = "The following keys are going to be accepted:\nRejected Keys:\nweb3\nKey for minion web3 accepted.\n"
	if d := cmp.Diff(want, out); d != "" {
		t.Errorf("include rejected (-want +got):\n%s", d)
	}
	out, _, _ = e.run("", "-A", "-y")
	want = "The following keys are going to be accepted:\nUnaccepted Keys:\ndb1\nKey for minion db1 accepted.\n"
	if d := cmp.Diff(want, out); d != "" {
		t.Errorf("accept all (-want +got):\n%s", d)
	}
}

func TestRejectDelete(t *testing.T) {
	e := newEnv(t)
	e.key(pki.Pending, "m1", e.pub)
	e.key(pki.Accepted, "m2", e.pub)

	out, _, _ := e.run("", "-r", "m*", "-y")
	want := "The following keys are going to be rejected:\nUnaccepted Keys:\nm1\nKey for minion m1 rejected.\n"
	if d := cmp.Diff(want, out); d != "" {
		t.Errorf("reject (-want +got):\n%s", d)
	}
	out, _, _ = e.run("", "-r", "m2", "--include-accepted", "-y")
	if !strings.Contains(out, "Accepted Keys:\nm2\nKey for minion m2 rejected.\n") {
		t.Errorf("reject accepted: %q", out)
	}

	out, _, _ = e.run("\n", "-d", "m1")
	want = "The following keys are going to be deleted:\nRejected Keys:\nm1\nProceed? [N/y] "
	if d := cmp.Diff(want, out); d != "" {
		t.Errorf("delete default no (-want +got):\n%s", d)
	}
	out, _, _ = e.run("y\n", "-D")
	want = "The following keys are going to be deleted:\nRejected Keys:\nm1\nm2\nProceed? [N/y] " +
		"Key for minion m1 deleted.\nKey for minion m2 deleted.\n"
	if d := cmp.Diff(want, out); d != "" {
		t.Errorf("delete all (-want +got):\n%s", d)
	}
	if len(e.states("m1")) != 0 || len(e.states("m2")) != 0 {
		t.Errorf("keys left after delete")
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(e.pkiDir), "cache", ".dfn")); err != nil {
		t.Errorf("no AES rotation dropfile: %v", err)
	}
}

func TestFingerPrintGenKeys(t *testing.T) {
	e := newEnv(t)
	e.key(pki.Accepted, "m1", e.pub)
	f, err := crypt.PemFinger(filepath.Join(e.pkiDir, "minions", "m1"), "sha256")
	must(t, err)
	mf, err := crypt.PemFinger(filepath.Join(e.pkiDir, "master.pub"), "sha256")
	must(t, err)

	out, _, _ := e.run("", "-F")
	want := "Local Keys:\nmaster.pub:  " + mf + "\nAccepted Keys:\nm1:  " + f + "\n"
	if d := cmp.Diff(want, out); d != "" {
		t.Errorf("finger all (-want +got):\n%s", d)
	}
	out, _, _ = e.run("", "-f", "m1")
	if want := "Accepted Keys:\nm1:  " + f + "\n"; out != want {
		t.Errorf("finger = %q", out)
	}
	out, _, _ = e.run("", "-p", "m1")
	if want := "Accepted Keys:\nm1:  " + e.pub + "\n"; out != want {
		t.Errorf("print = %q", out)
	}

	dir := filepath.Join(t.TempDir(), "gen")
	out, errs, code := e.run("", "--gen-keys", "newkey", "--gen-keys-dir", dir)
	if code != 0 {
		t.Fatalf("gen keys: %d %s", code, errs)
	}
	gf, err := crypt.PemFinger(filepath.Join(dir, "newkey.pub"), "sha256")
	must(t, err)
	if want := "return:\n    " + gf + "\n"; out != want {
		t.Errorf("gen keys output %q, want %q", out, want)
	}
	st, err := os.Stat(filepath.Join(dir, "newkey.pem"))
	must(t, err)
	if st.Mode().Perm() != 0o400 {
		t.Errorf("newkey.pem mode %o", st.Mode().Perm())
	}
}

func TestOptionTable(t *testing.T) {
	var o options
	fs := newFlagSet(&o, &bytes.Buffer{})
	var got []string
	fs.VisitAll(func(f *pflagFlag) { got = append(got, f.Shorthand+"/"+f.Name) })
	want := []string{"A/accept-all", "D/delete-all", "F/finger-all", "L/list-all", "P/print-all", "R/reject-all",
		"a/accept", "c/config-dir", "d/delete", "f/finger", "l/list", "p/print", "q/quiet", "r/reject", "u/user", "y/yes",
		"/auto-create", "/force-color", "/gen-keys", "/gen-signature", "/priv", "/pub", "/signature-path", "/gen-keys-dir", "/include-accepted", "/include-all", "/include-denied",
		"/include-rejected", "/keysize", "/log-level", "/no-color", "/out", "/out-indent", "/output",
		"/preserve-minions", "/rotate-aes-key"}
	if d := cmp.Diff(sortStrings(want), sortStrings(got)); d != "" {
		t.Errorf("options (-want +got):\n%s", d)
	}
}

func TestGenSignature(t *testing.T) {
	e := newEnv(t)
	out, _, _ := e.run("", "--gen-signature")
	if want := "return:\n    No usable private-key found\n"; out != want {
		t.Errorf("no key: %q", out)
	}
	out, errs, code := e.run("", "--gen-signature", "--auto-create")
	if code != 0 || out != "return:\n    True\n" {
		t.Fatalf("auto-create: %d %q %s", code, out, errs)
	}
	signKey, err := crypt.LoadPrivateKey(filepath.Join(e.pkiDir, "master_sign.pem"), "")
	must(t, err)
	sig, err := os.ReadFile(filepath.Join(e.pkiDir, "master_pubkey_signature"))
	must(t, err)
	pub, err := os.ReadFile(filepath.Join(e.pkiDir, "master.pub"))
	must(t, err)
	if err := crypt.VerifyPubSig(&signKey.PublicKey, string(pub), string(sig), crypt.PKCS1v15SHA1); err != nil {
		t.Errorf("signature: %v", err)
	}
	if out, _, _ := e.run("", "--gen-signature"); out != "return:\n    False\n" {
		t.Errorf("existing signature: %q", out)
	}
}

// TestGenSignatureKeyPass: with signing_key_pass in the master config,
// --gen-signature --auto-create makes the signing key encrypted with it
// and signs with it, and --gen-keys encrypts the pair it writes, as
// Salt's Key passes its passphrase to gen_keys and gen_signature.
func TestGenSignatureKeyPass(t *testing.T) {
	e := newEnv(t)
	conf := filepath.Join(e.confDir, "master")
	b, err := os.ReadFile(conf)
	must(t, err)
	must(t, os.WriteFile(conf, append(b, "signing_key_pass: pass-for-signing\n"...), 0o600))
	out, errs, code := e.run("", "--gen-signature", "--auto-create")
	if code != 0 || out != "return:\n    True\n" {
		t.Fatalf("auto-create: %d %q %s", code, out, errs)
	}
	if _, err := crypt.LoadPrivateKey(filepath.Join(e.pkiDir, "master_sign.pem"), ""); err == nil {
		t.Error("master_sign.pem is not encrypted")
	}
	signKey, err := crypt.LoadPrivateKey(filepath.Join(e.pkiDir, "master_sign.pem"), "pass-for-signing")
	must(t, err)
	sig, err := os.ReadFile(filepath.Join(e.pkiDir, "master_pubkey_signature"))
	must(t, err)
	pub, err := os.ReadFile(filepath.Join(e.pkiDir, "master.pub"))
	must(t, err)
	if err := crypt.VerifyPubSig(&signKey.PublicKey, string(pub), string(sig), crypt.PKCS1v15SHA1); err != nil {
		t.Errorf("signature: %v", err)
	}
	dir := t.TempDir()
	if _, errs, code := e.run("", "--gen-keys", "k1", "--gen-keys-dir", dir); code != 0 {
		t.Fatalf("--gen-keys: %d %s", code, errs)
	}
	if _, err := crypt.LoadPrivateKey(filepath.Join(dir, "k1.pem"), "pass-for-signing"); err != nil {
		t.Errorf("--gen-keys with signing_key_pass: %v", err)
	}
	if strings.Contains(out+errs, "pass-for-signing") {
		t.Errorf("the passphrase was printed")
	}
}
