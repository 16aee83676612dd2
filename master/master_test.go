package master

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/crypt"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/pki"
	"github.com/brinesalt/brine/internal/protocol"
	"github.com/brinesalt/brine/internal/transport"
)

// testOptions are a master's options on loopback ports the kernel picks,
// with every directory under dir.
func testOptions(dir string) Options {
	o := DefaultOptions()
	o.Interface, o.PublishPort, o.RetPort = "127.0.0.1", 0, 0
	o.PKIDir, o.CacheDir, o.SockDir = dir+"/pki", dir+"/cache", dir+"/sock"
	o.FileRoots = map[string][]string{"base": {dir + "/srv"}}
	o.PillarRoots = map[string][]string{"base": {dir + "/pillar"}}
	o.MaxMessage = 1 << 20
	return o
}

func startMaster(t *testing.T) (*Master, context.Context) {
	t.Helper()
	o := testOptions(t.TempDir())
	o.Auth.AutoAccept = true
	m, err := New(o, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	if err := m.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Stop(); cancel() })
	return m, ctx
}

// signIn authenticates a minion with id over the request socket and
// returns its key and session Crypticle.
func signIn(t *testing.T, ctx context.Context, req *transport.Req, id string) (*pki.Minion, *crypt.Crypticle) {
	t.Helper()
	mp := pki.NewMinion(filepath.Join(t.TempDir(), id))
	key, err := mp.Key(2048)
	if err != nil {
		t.Fatal(err)
	}
	a, err := mp.AuthRequest(id, "00112233445566778899aabbccddeeff", []byte(crypt.GenerateKeyString()), crypt.OAEPSHA1, crypt.PKCS1v15SHA1, nil)
	if err != nil {
		t.Fatal(err)
	}
	frame, _ := protocol.Marshal(&protocol.Request{Enc: protocol.EncClear, Load: a, Version: protocol.RequestVersion})
	raw, err := req.Do(ctx, frame)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := protocol.Unmarshal(raw)
	sc, _, err := protocol.DecodeSignedClear(v)
	if err != nil {
		t.Fatalf("auth reply %v: %v", v, err)
	}
	body, _ := protocol.Unmarshal(sc.Load)
	reply, err := protocol.ParseAuthReply(body.(*ordered.Map))
	if err != nil {
		t.Fatal(err)
	}
	mk, _ := crypt.ParsePublicKey([]byte(reply.PubKey))
	keys, err := crypt.OpenAuthReply(key, mk, reply, nil, crypt.OAEPSHA1)
	if err != nil {
		t.Fatal(err)
	}
	sess, _ := crypt.NewCrypticle(keys.Session)
	return mp, sess
}

// TestHostileFrames checks that garbage, truncated, replayed and
// oversized requests are refused and the master keeps serving.
func TestHostileFrames(t *testing.T) {
	m, ctx := startMaster(t)
	req := &transport.Req{Addr: m.RetAddr().String()}
	defer req.Close()
	mp, sess := signIn(t, ctx, req, "m1")
	key, _ := mp.Key(2048)

	jid, _, err := m.Publish(ctx, PublishRequest{Tgt: "m1", Fun: "test.ping"})
	if err != nil {
		t.Fatal(err)
	}
	ret := (&protocol.Return{ID: "m1", Success: true, Return: true, JID: jid, Fun: "test.ping"}).SaltMap()
	const nonce = "fedcba9876543210fedcba9876543210"
	rq, _ := crypt.PackageRequest(sess, key, "m1", ret, nonce, time.Now(), crypt.OAEPSHA1, crypt.PKCS1v15SHA1)
	good, _ := protocol.Marshal(rq)

	isBadLoad := func(raw []byte) bool {
		v, err := protocol.Unmarshal(raw)
		return err == nil && v == "bad load"
	}
	for name, frame := range map[string][]byte{
		"garbage":   []byte("\xc1\xc1 not msgpack"),
		"truncated": good[:len(good)/2],
		"not a map": []byte("\x93\x01\x02\x03"),
		"wrong id":  mustPack(ordered.FromPairs("enc", "aes", "load", []byte("xx"), "version", 3, "id", "../etc")),
	} {
		raw, err := req.Do(ctx, frame)
		if err != nil || !isBadLoad(raw) {
			t.Errorf("%s: reply %q, %v", name, raw, err)
		}
	}
	raw, err := req.Do(ctx, good)
	if err != nil || isBadLoad(raw) {
		t.Fatalf("good return refused: %q %v", raw, err)
	}
	if v, err := sess.Loads(mustBytes(t, raw), nonce); err != nil || v != true {
		t.Fatalf("reply = %v, %v", v, err)
	}
	raw, err = req.Do(ctx, good)
	if err != nil || !isBadLoad(raw) {
		t.Fatalf("replayed frame: %q %v", raw, err)
	}
	// The same return under a new nonce is a duplicate for the job cache.
	rq2, _ := crypt.PackageRequest(sess, key, "m1", ret, "0123456789abcdef0123456789abcdef", time.Now(), crypt.OAEPSHA1, crypt.PKCS1v15SHA1)
	second, _ := protocol.Marshal(rq2)
	raw, _ = req.Do(ctx, second)
	if v, err := sess.Loads(mustBytes(t, raw), "0123456789abcdef0123456789abcdef"); err != nil || v != false {
		t.Fatalf("duplicate return: %v, %v", v, err)
	}
	if _, err := req.Do(ctx, make([]byte, 2<<20)); err == nil {
		t.Fatal("oversized request answered")
	}
	if got := m.lookupJID(jid); got.Value("m1") != true {
		t.Fatalf("lookup_jid = %v", got)
	}
	// Still serving after all that.
	raw, err = req.Do(ctx, []byte("x"))
	if err != nil || !isBadLoad(raw) {
		t.Fatalf("after refusals: %q %v", raw, err)
	}
}

func mustBytes(t *testing.T, raw []byte) []byte {
	t.Helper()
	v, err := protocol.Unmarshal(raw)
	if err != nil {
		t.Fatal(err)
	}
	b, ok := protocol.AsBytes(v)
	if !ok {
		t.Fatalf("reply is %T %v", v, v)
	}
	return b
}

// TestCheckMinions checks the expected-minion lists for id and grain
// targets, greedy for minions without cached grains.
func TestCheckMinions(t *testing.T) {
	m, _ := startMaster(t)
	for _, id := range []string{"web1", "web2", "db1"} {
		mp := pki.NewMinion(filepath.Join(t.TempDir(), id))
		if _, err := mp.Key(2048); err != nil {
			t.Fatal(err)
		}
		pub, _ := mp.PubString()
		if _, err := m.pki.Authorize(id, pub, nil, m.o.Auth); err != nil {
			t.Fatal(err)
		}
	}
	m.storeData("web1", minionData{Grains: ordered.FromPairs("role", "web"), Pillar: ordered.New()})
	m.storeData("db1", minionData{Grains: ordered.FromPairs("role", "db"), Pillar: ordered.New()})
	for _, tc := range []struct {
		tgt  any
		kind string
		want string
	}{
		{"web*", "glob", "[web1 web2]"},
		{[]any{"db1", "nope"}, "list", "[db1]"},
		{"role:web", "grain", "[web1 web2]"}, // web2 has no cache: greedy
		{"G@role:db or web1", "compound", "[db1 web1 web2]"},
		// Each word of a compound is its own set, as in Salt's
		// _check_compound_minions: web2 (no cache) is kept by the grain
		// word but not by the glob.
		{"db* and G@role:db", "compound", "[db1]"},
		// Malformed expressions reach whom Salt's reach: an unclosed
		// group is closed, an unknown nodegroup dropped, a bad subnet is
		// nobody.
		{"( web*", "compound", "[web1 web2]"},
		{"N@nope web1", "compound", "[web1]"},
		{"S@bad or db1", "compound", "[db1]"},
		{"not S@bad", "compound", "[db1 web1 web2]"},
	} {
		kind, _ := ParseKindForTest(tc.kind)
		got, err := m.CheckMinions(tc.tgt, kind, "")
		if err != nil || fmtList(got) != tc.want {
			t.Errorf("%v %s: %v %v, want %s", tc.tgt, tc.kind, got, err, tc.want)
		}
	}
	// Where Salt logs the expression and expects nobody, the error says
	// why.
	for _, tgt := range []string{"( )", "web1 )", "and web1", "E@(", "web1 ( db1 )", "N@nope"} {
		got, err := m.CheckMinions(tgt, "compound", "")
		if len(got) != 0 {
			t.Errorf("%q: %v, want no minions", tgt, got)
		}
		if tgt != "( )" && err == nil {
			t.Errorf("%q: no error", tgt)
		}
	}
	m.o.Nodegroups = map[string]any{"open": "( web*"}
	if got, err := m.CheckMinions("open", "nodegroup", ""); err != nil || fmtList(got) != "[web1 web2]" {
		t.Errorf("nodegroup open: %v %v, want [web1 web2]", got, err)
	}
}

// TestZMQFiltering checks the two-frame topic publications: a minion
// subscribed to its sha1 topic and "broadcast" receives jobs for itself
// and grain targets, not id targets for others.
func TestZMQFiltering(t *testing.T) {
	m, ctx := startMaster(t)
	m.o.ZMQFiltering = true
	for _, id := range []string{"m1", "m2"} {
		mp := pki.NewMinion(filepath.Join(t.TempDir(), id))
		if _, err := mp.Key(2048); err != nil {
			t.Fatal(err)
		}
		pub, _ := mp.PubString()
		m.pki.Authorize(id, pub, nil, m.o.Auth)
	}
	sub, err := transport.Dial(ctx, m.PublishAddr().String(), transport.TypeSUB, []byte("m1"), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	sub.Subscribe([]byte("broadcast"))
	sub.Subscribe([]byte(transport.Topic("m1")))
	deadline := time.Now().Add(10 * time.Second)
	var frames [][]byte
	got := make(chan [][]byte, 10)
	go func() {
		for {
			f, _, err := sub.Recv()
			if err != nil {
				close(got)
				return
			}
			got <- f
		}
	}()
	// Subscriptions travel asynchronously: publish until one arrives.
	for frames == nil && time.Now().Before(deadline) {
		m.Publish(ctx, PublishRequest{Tgt: "m2", Fun: "test.ping"})
		m.Publish(ctx, PublishRequest{Tgt: "m1", Fun: "test.ping"})
		select {
		case frames = <-got:
		case <-time.After(100 * time.Millisecond):
		}
	}
	if len(frames) != 2 || string(frames[0]) != transport.Topic("m1") {
		t.Fatalf("frames = %q", frames)
	}
	m.Publish(ctx, PublishRequest{Tgt: "role:web", TgtType: "grain", Fun: "test.ping"})
	for {
		select {
		case f := <-got:
			if string(f[0]) == "broadcast" {
				return
			}
			if string(f[0]) != transport.Topic("m1") {
				t.Fatalf("received another minion's topic %q", f[0])
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no broadcast publication")
		}
	}
}

// TestFileServer asks for files over the encrypted request channel.
func TestFileServer(t *testing.T) {
	m, ctx := startMaster(t)
	root := m.o.FileRoots["base"][0]
	if err := os.MkdirAll(filepath.Join(root, "web"), 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(root, "web", "index.html"), []byte("hello"), 0o600)
	req := &transport.Req{Addr: m.RetAddr().String()}
	defer req.Close()
	ask := asker(t, ctx, req, "m1")
	r, err := protocol.ParseServeFileReply(ask((&protocol.ServeFileRequest{Path: "salt://web/index.html", Saltenv: "base"}).SaltMap()))
	if err != nil || string(r.Data) != "hello" || r.Dest != "web/index.html" {
		t.Fatalf("serve_file: %+v %v", r, err)
	}
	r, _ = protocol.ParseServeFileReply(ask((&protocol.ServeFileRequest{Path: "salt://web/index.html", Saltenv: "base", Loc: 5}).SaltMap()))
	if len(r.Data) != 0 {
		t.Fatalf("past the end: %+v", r)
	}
	r, _ = protocol.ParseServeFileReply(ask((&protocol.ServeFileRequest{Path: "salt://../../etc/passwd", Saltenv: "base"}).SaltMap()))
	if r.Dest != "" || len(r.Data) != 0 {
		t.Fatalf("escaped the root: %+v", r)
	}
	hl, _ := protocol.FileLoad(protocol.CmdFileHash, "salt://web/index.html", "base", "")
	if h, _ := ask(hl).(*ordered.Map); h.Value("hsum") != "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824" {
		t.Fatalf("file_hash: %v", h)
	}
	ll, _ := protocol.FileLoad(protocol.CmdFileList, "", "base", "")
	if l, _ := ask(ll).([]any); len(l) != 1 || l[0] != "web/index.html" {
		t.Fatalf("file_list: %v", l)
	}
}

// asker signs id in over req and returns a function that sends an "aes"
// request load and returns the decrypted reply.
func asker(t *testing.T, ctx context.Context, req *transport.Req, id string) func(*ordered.Map) any {
	t.Helper()
	mp, sess := signIn(t, ctx, req, id)
	key, _ := mp.Key(2048)
	return func(load *ordered.Map) any {
		t.Helper()
		nonce := protocol.NewJID(time.Now()) + "000000000000"
		rq, _ := crypt.PackageRequest(sess, key, id, load, nonce, time.Now(), crypt.OAEPSHA1, crypt.PKCS1v15SHA1)
		frame, _ := protocol.Marshal(rq)
		raw, err := req.Do(ctx, frame)
		if err != nil {
			t.Fatal(err)
		}
		v, err := sess.Loads(mustBytes(t, raw), nonce)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// TestLargeLoadOnlyAfterAuthentication: a peer that has not sent a load
// that opened with a session key may not send more than the transport's
// fresh limit (1 MiB), so a stranger's 2 MiB frame closes its
// connection unread; once a minion's return opened, a 2 MiB return from
// its address, on a new connection as Salt's minion opens one per
// return, is served.
func TestLargeLoadOnlyAfterAuthentication(t *testing.T) {
	dir := t.TempDir()
	o := DefaultOptions()
	o.Interface, o.PublishPort, o.RetPort = "127.0.0.1", 0, 0
	o.PKIDir, o.CacheDir, o.SockDir = dir+"/pki", dir+"/cache", dir+"/sock"
	o.Auth.AutoAccept = true
	o.MaxMessage = 8 << 20
	m, err := New(o, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := m.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer m.Stop()
	stranger := &transport.Req{Addr: m.RetAddr().String()}
	defer stranger.Close()
	if raw, err := stranger.Do(ctx, make([]byte, 2<<20)); err == nil {
		t.Fatalf("2 MiB frame from an unauthenticated peer answered: %q", raw)
	}
	req := &transport.Req{Addr: m.RetAddr().String()}
	defer req.Close()
	mp, sess := signIn(t, ctx, req, "m1")
	key, _ := mp.Key(2048)
	send := func(c *transport.Req, ret any, nonce string) any {
		t.Helper()
		jid, _, err := m.Publish(ctx, PublishRequest{Tgt: "m1", Fun: "test.echo"})
		if err != nil {
			t.Fatal(err)
		}
		load := (&protocol.Return{ID: "m1", Success: true, Return: ret, JID: jid, Fun: "test.echo"}).SaltMap()
		rq, _ := crypt.PackageRequest(sess, key, "m1", load, nonce, time.Now(), crypt.OAEPSHA1, crypt.PKCS1v15SHA1)
		frame, _ := protocol.Marshal(rq)
		raw, err := c.Do(ctx, frame)
		if err != nil {
			t.Fatalf("return of %d bytes: %v", len(frame), err)
		}
		v, err := sess.Loads(mustBytes(t, raw), nonce)
		if err != nil {
			t.Fatalf("reply %q: %v", raw, err)
		}
		return v
	}
	if v := send(req, "small", "00000000000000000000000000000001"); v != true {
		t.Fatalf("small return: %v", v)
	}
	big := &transport.Req{Addr: m.RetAddr().String()}
	defer big.Close()
	if v := send(big, strings.Repeat("x", 2<<20), "00000000000000000000000000000002"); v != true {
		t.Fatalf("2 MiB return: %v", v)
	}
}
