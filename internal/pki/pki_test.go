package pki

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/crypt"
)

func readPub(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "crypt", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return crypt.CleanKey(string(data))
}

func newTestMaster(t *testing.T) *Master {
	t.Helper()
	m := NewMaster(filepath.Join(t.TempDir(), "pki"))
	for _, d := range append([]string{""}, Accepted, Pending, Rejected, Denied, AutosignDir) {
		if err := os.MkdirAll(filepath.Join(m.Dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

func put(t *testing.T, m *Master, state, id, pub string) {
	t.Helper()
	if err := os.WriteFile(m.Path(state, id), []byte(pub), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestAuthorize(t *testing.T) {
	keyA, keyB := readPub(t, "go_key.pub"), readPub(t, "py_key.pub")
	tests := []struct {
		name     string
		setup    func(t *testing.T, m *Master, dir string)
		opts     func(dir string) AuthOptions
		pub      string
		accepted bool
		ret      bool
		act      string
		// files lists the states holding the id afterwards.
		files []string
	}{
		{name: "new key pends", pub: keyA, ret: true, act: "pend", files: []string{Pending}},
		{name: "pending same key stays pending", pub: keyA, ret: true, act: "pend", files: []string{Pending},
			setup: func(t *testing.T, m *Master, _ string) { put(t, m, Pending, "m1", keyA) }},
		{name: "pending other key is denied", pub: keyB, act: "denied", files: []string{Pending, Denied},
			setup: func(t *testing.T, m *Master, _ string) { put(t, m, Pending, "m1", keyA) }},
		{name: "accepted same key", pub: keyA, accepted: true, ret: true, act: "accept", files: []string{Accepted},
			setup: func(t *testing.T, m *Master, _ string) { put(t, m, Accepted, "m1", keyA+"\n") }},
		{name: "accepted other key is denied", pub: keyB, act: "denied", files: []string{Accepted, Denied},
			setup: func(t *testing.T, m *Master, _ string) { put(t, m, Accepted, "m1", keyA) }},
		{name: "rejected stays rejected", pub: keyA, files: []string{Rejected},
			setup: func(t *testing.T, m *Master, _ string) { put(t, m, Rejected, "m1", keyA) }},
		{name: "auto_accept", pub: keyA, accepted: true, ret: true, act: "accept", files: []string{Accepted},
			opts: func(string) AuthOptions { return AuthOptions{AutoAccept: true} }},
		{name: "auto_accept pending", pub: keyA, accepted: true, ret: true, act: "accept", files: []string{Accepted},
			setup: func(t *testing.T, m *Master, _ string) { put(t, m, Pending, "m1", keyA) },
			opts:  func(string) AuthOptions { return AuthOptions{AutoAccept: true} }},
		{name: "autosign_file glob", pub: keyA, accepted: true, ret: true, act: "accept", files: []string{Accepted},
			setup: func(t *testing.T, _ *Master, dir string) {
				os.WriteFile(filepath.Join(dir, "autosign.conf"), []byte("# comment\nweb*\nm?\n"), 0o644)
			},
			opts: func(dir string) AuthOptions { return AuthOptions{AutosignFile: filepath.Join(dir, "autosign.conf")} }},
		{name: "autosign_file regex", pub: keyA, accepted: true, ret: true, act: "accept", files: []string{Accepted},
			setup: func(t *testing.T, _ *Master, dir string) {
				os.WriteFile(filepath.Join(dir, "autosign.conf"), []byte("m[0-9]+\n"), 0o644)
			},
			opts: func(dir string) AuthOptions { return AuthOptions{AutosignFile: filepath.Join(dir, "autosign.conf")} }},
		{name: "world-writable autosign_file ignored", pub: keyA, ret: true, act: "pend", files: []string{Pending},
			setup: func(t *testing.T, _ *Master, dir string) {
				p := filepath.Join(dir, "autosign.conf")
				os.WriteFile(p, []byte("*\n"), 0o644)
				os.Chmod(p, 0o666)
			},
			opts: func(dir string) AuthOptions { return AuthOptions{AutosignFile: filepath.Join(dir, "autosign.conf")} }},
		{name: "autoreject_file", pub: keyA, act: "reject", files: []string{Rejected},
			setup: func(t *testing.T, _ *Master, dir string) {
				os.WriteFile(filepath.Join(dir, "autoreject.conf"), []byte("m1\n"), 0o644)
			},
			opts: func(dir string) AuthOptions {
				return AuthOptions{AutoAccept: true, AutorejectFile: filepath.Join(dir, "autoreject.conf")}
			}},
		{name: "autoreject pending", pub: keyA, act: "reject", files: []string{Rejected},
			setup: func(t *testing.T, m *Master, dir string) {
				put(t, m, Pending, "m1", keyA)
				os.WriteFile(filepath.Join(dir, "autoreject.conf"), []byte("*\n"), 0o644)
			},
			opts: func(dir string) AuthOptions {
				return AuthOptions{AutorejectFile: filepath.Join(dir, "autoreject.conf")}
			}},
		{name: "autosign stub accepts once", pub: keyA, accepted: true, ret: true, act: "accept", files: []string{Accepted},
			setup: func(t *testing.T, m *Master, _ string) { put(t, m, AutosignDir, "m1", "") }},
		{name: "open_mode overwrites", pub: keyB, accepted: true, ret: true, act: "accept", files: []string{Accepted},
			setup: func(t *testing.T, m *Master, _ string) {
				put(t, m, Rejected, "m1", keyA)
				os.Remove(m.Path(Rejected, "m1"))
			},
			opts: func(string) AuthOptions { return AuthOptions{OpenMode: true} }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newTestMaster(t)
			dir := t.TempDir()
			if tc.setup != nil {
				tc.setup(t, m, dir)
			}
			var o AuthOptions
			if tc.opts != nil {
				o = tc.opts(dir)
			}
			out, err := m.Authorize("m1", tc.pub, nil, o)
			if err != nil {
				t.Fatal(err)
			}
			if out.Accepted != tc.accepted || out.Ret != tc.ret || out.Act != tc.act {
				t.Errorf("outcome = %+v, want accepted %v ret %v act %q", out, tc.accepted, tc.ret, tc.act)
			}
			var files []string
			for _, s := range States {
				if isFile(m.Path(s, "m1")) {
					files = append(files, s)
				}
			}
			if d := cmp.Diff(tc.files, files); d != "" {
				t.Errorf("key files (-want +got):\n%s", d)
			}
		})
	}
}

func TestAuthorizeInvalidID(t *testing.T) {
	m := newTestMaster(t)
	for _, id := range []string{"", ".", "..", "a/b", `a\b`, "a\x00b"} {
		if _, err := m.Authorize(id, "x", nil, AuthOptions{AutoAccept: true}); !errors.Is(err, ErrInvalidID) {
			t.Errorf("id %q: err = %v", id, err)
		}
	}
}

func TestKeyActions(t *testing.T) {
	keyA := readPub(t, "go_key.pub")
	m := newTestMaster(t)
	var events []string
	m.Events = func(e Event) {
		events = append(events, e.Tag+" "+e.Data.Value("act").(string)+" "+e.Data.Value("id").(string))
	}
	for _, id := range []string{"web1", "Web2", "db1", "bad"} {
		put(t, m, Pending, id, keyA)
	}
	put(t, m, Pending, "bad", "not a key")
	put(t, m, Rejected, "web3", keyA)
	put(t, m, Pending, ".hidden", keyA)

	if got, want := m.ListKeys().Get(Pending), []string{"bad", "db1", "web1", "Web2"}; !cmp.Equal(got, want) {
		t.Errorf("pending = %v, want %v", got, want)
	}
	match := m.NameMatch("web*,bad", false)
	if d := cmp.Diff(Listing{{Pending, []string{"bad", "web1"}}, {Rejected, []string{"web3"}}}, match); d != "" {
		t.Errorf("NameMatch (-want +got):\n%s", d)
	}
	res, errs := m.Accept(match, false, false)
	if len(errs) != 1 || errs[0].Error() != "Unable to accept invalid key for bad." {
		t.Errorf("errs = %v", errs)
	}
	if d := cmp.Diff(Listing{{Accepted, []string{"web1"}}, {Rejected, []string{"web3"}}}, res); d != "" {
		t.Errorf("Accept result (-want +got):\n%s", d)
	}
	res, _ = m.Accept(m.NameMatch("web3", false), true, false)
	if d := cmp.Diff(Listing{{Accepted, []string{"web3"}}}, res); d != "" {
		t.Errorf("Accept rejected (-want +got):\n%s", d)
	}
	m.Reject(m.NameMatch("db1", false), false, false)
	m.Delete(m.NameMatch("web1", false))
	if d := cmp.Diff(Listing{
		{Accepted, []string{"web3"}}, {Pending, []string{"bad", "Web2"}},
		{Rejected, []string{"db1"}}, {Denied, []string{}},
	}, m.ListKeys()); d != "" {
		t.Errorf("ListKeys (-want +got):\n%s", d)
	}
	want := []string{"salt/key accept web1", "salt/key accept web3", "salt/key reject db1", "salt/key delete web1"}
	if d := cmp.Diff(want, events); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
	m.DeleteAll()
	for _, g := range m.ListKeys() {
		if len(g.Keys) != 0 {
			t.Errorf("after DeleteAll %s = %v", g.State, g.Keys)
		}
	}
}

func TestExprMatch(t *testing.T) {
	tests := []struct {
		line, expr string
		want       bool
	}{
		{"web1", "web*", true}, {"web1", "web1", true}, {"web1", "w.b1", true},
		{"web1", "eb1", false}, {"web1", "web[0-9]", true}, {"web12", "web[0-9]", false},
		{"web1", "(", false},
	}
	for _, tc := range tests {
		if got := ExprMatch(tc.line, tc.expr); got != tc.want {
			t.Errorf("ExprMatch(%q, %q) = %v", tc.line, tc.expr, got)
		}
	}
}

func TestConcurrentAuthorize(t *testing.T) {
	keyA := readPub(t, "go_key.pub")
	m := newTestMaster(t)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%2 == 0 {
				m.Authorize("m1", keyA, nil, AuthOptions{})
			} else {
				m.AcceptAll()
			}
		}()
	}
	wg.Wait()
	n := 0
	for _, s := range States {
		if isFile(m.Path(s, "m1")) {
			n++
		}
	}
	if n != 1 {
		t.Errorf("key in %d states", n)
	}
}

func TestMinionPKI(t *testing.T) {
	m := NewMinion(filepath.Join(t.TempDir(), "minion"))
	k, err := m.Key(2048)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := m.PubString()
	if err != nil || pub != crypt.CleanKey(string(crypt.EncodePublicKey(&k.PublicKey))) {
		t.Errorf("PubString = %q, %v", pub, err)
	}
	if _, ok, _ := m.MasterPub(); ok {
		t.Errorf("master pub cached before SaveMasterPub")
	}
	master := readPub(t, "py_key.pub")
	if err := m.SaveMasterPub(master); err != nil {
		t.Fatal(err)
	}
	if got, ok, _ := m.MasterPub(); !ok || got != master {
		t.Errorf("MasterPub = %q, %v", got, ok)
	}
}

func TestAuthorizeFull(t *testing.T) {
	m := newTestMaster(t)
	o := AuthOptions{AutoAccept: true, MaxMinions: 1, Connected: []string{"a", "b"}}
	out, err := m.Authorize("m1", readPub(t, "go_key.pub"), nil, o)
	if err != nil || !out.Full || out.Reply() != "full" || out.Act != "full" {
		t.Errorf("outcome %+v, %v", out, err)
	}
	o.Connected = []string{"a", "m1"}
	if out, _ := m.Authorize("m1", readPub(t, "go_key.pub"), nil, o); !out.Accepted {
		t.Errorf("connected minion refused: %+v", out)
	}
}

func TestMasterKeysAndMinionSignIn(t *testing.T) {
	dir := t.TempDir()
	master := NewMaster(filepath.Join(dir, "master"))
	if err := master.Init(2048); err != nil {
		t.Fatal(err)
	}
	mk, mpub, err := master.Keys(2048, "")
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(master.Dir, "master.pub"))
	if _, again, err := master.Keys(2048, ""); err != nil || again != mpub {
		t.Errorf("rewritten master.pub differs: %v", err)
	}
	minion := NewMinion(filepath.Join(dir, "minion"))
	if _, err := minion.Key(2048); err != nil {
		t.Fatal(err)
	}
	req, err := minion.AuthRequest("m1", "n", []byte("tok"), crypt.OAEPSHA1, crypt.PKCS1v15SHA1, nil)
	if err != nil || req.Token != nil {
		t.Fatalf("first sign-in: token %v, %v", req.Token, err)
	}
	if saved, err := minion.CheckMasterKey(mpub, false, false); !saved || err != nil {
		t.Fatalf("CheckMasterKey first = %v, %v", saved, err)
	}
	req, err = minion.AuthRequest("m1", "n", []byte("tok"), crypt.OAEPSHA1, crypt.PKCS1v15SHA1, nil)
	if err != nil || req.Token == nil {
		t.Fatalf("second sign-in: %v", err)
	}
	if tok, err := crypt.Decrypt(mk, req.Token, crypt.OAEPSHA1); err != nil || string(tok) != "tok" {
		t.Errorf("token %q, %v", tok, err)
	}
	if _, err := minion.CheckMasterKey(readPub(t, "py_key.pub"), true, false); !errors.Is(err, ErrMasterKeyChanged) {
		t.Errorf("changed master key: %v", err)
	}
	if _, err := minion.CheckMasterKey(readPub(t, "py_key.pub"), true, true); err != nil {
		t.Errorf("open mode: %v", err)
	}
}
