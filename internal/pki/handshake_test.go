package pki

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/crypt"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
)

// TestHandshake runs the whole exchange in process: sign-in (pending,
// then accepted), the master's signed reply, an encrypted _return and a
// publication, every message going through its wire bytes.
func TestHandshake(t *testing.T) {
	dir := t.TempDir()
	master := NewMaster(filepath.Join(dir, "master"))
	if err := master.Init(2048); err != nil {
		t.Fatal(err)
	}
	mkey, mpub, err := master.Keys(2048, "")
	must(t, err)
	aesKey := crypt.GenerateKeyString()
	sessions := map[string]string{}

	minion := NewMinion(filepath.Join(dir, "minion"))
	nkey, err := minion.Key(2048)
	must(t, err)

	// serve is the master's request handler for _auth.
	serve := func(frame []byte, o AuthOptions) []byte {
		req, err := protocol.DecodeRequest(frame)
		must(t, err)
		auth, err := protocol.ParseAuthRequest(req.Load.(*ordered.Map))
		must(t, err)
		out, err := master.Authorize(auth.ID, auth.Pub, auth.AutosignGrains, o)
		must(t, err)
		var load any = protocol.AuthRefusal(out.Reply(), auth.Nonce)
		if out.Accepted {
			npub, err := crypt.ParsePublicKey([]byte(auth.Pub))
			must(t, err)
			if sessions[auth.ID] == "" {
				sessions[auth.ID] = crypt.GenerateKeyString()
			}
			load, err = crypt.BuildAuthReply(mkey, npub, auth, crypt.AuthKeys{AES: aesKey, Session: sessions[auth.ID]}, mpub, 4505)
			must(t, err)
		}
		sc, err := crypt.SignClear(mkey, load, auth.SigAlgo)
		must(t, err)
		b, err := protocol.Marshal(sc)
		must(t, err)
		return b
	}
	// signIn is the minion's side; it returns the reply load.
	token := []byte(crypt.GenerateKeyString())
	signIn := func(o AuthOptions) (*ordered.Map, bool) {
		req, err := minion.AuthRequest("m1", "0123456789abcdef0123456789abcdef", token, crypt.OAEPSHA1, crypt.PKCS1v15SHA1, nil)
		must(t, err)
		frame, err := protocol.Marshal(&protocol.Request{Enc: protocol.EncClear, Load: req, Version: protocol.RequestVersion})
		must(t, err)
		v, err := protocol.Unmarshal(serve(frame, o))
		must(t, err)
		sc, _, err := protocol.DecodeSignedClear(v)
		must(t, err)
		body, err := protocol.Unmarshal(sc.Load)
		must(t, err)
		load := body.(*ordered.Map)
		if load.Value("nonce") != req.Nonce {
			t.Fatalf("nonce not echoed")
		}
		return load, req.Token != nil
	}

	load, _ := signIn(AuthOptions{})
	if load.Value("ret") != true {
		t.Fatalf("first sign-in: %v", load.Keys())
	}
	if got := master.ListKeys().Get(Pending); !cmp.Equal(got, []string{"m1"}) {
		t.Fatalf("pending = %v", got)
	}
	master.Accept(master.NameMatch("m1", false), false, false)

	load, sentToken := signIn(AuthOptions{})
	reply, err := protocol.ParseAuthReply(load)
	must(t, err)
	saved, err := minion.CheckMasterKey(reply.PubKey, sentToken, false)
	if err != nil || !saved {
		t.Fatalf("CheckMasterKey = %v, %v", saved, err)
	}
	masterPub, err := crypt.ParsePublicKey([]byte(reply.PubKey))
	must(t, err)
	var tok []byte
	if sentToken {
		tok = token
	}
	keys, err := crypt.OpenAuthReply(nkey, masterPub, reply, tok, crypt.OAEPSHA1)
	must(t, err)
	if keys.AES != aesKey || keys.Session != sessions["m1"] {
		t.Fatalf("keys differ")
	}
	// With the master key cached the next sign-in carries the token.
	load, sentToken = signIn(AuthOptions{})
	reply, err = protocol.ParseAuthReply(load)
	must(t, err)
	if !sentToken {
		t.Fatalf("no token on second sign-in")
	}
	if _, err := crypt.OpenAuthReply(nkey, masterPub, reply, token, crypt.OAEPSHA1); err != nil {
		t.Fatalf("second sign-in: %v", err)
	}

	// A _return over the session key, and the master's nonce-bound reply.
	session, err := crypt.NewCrypticle(keys.Session)
	must(t, err)
	ret := (&protocol.Return{ID: "m1", Success: true, Return: true, JID: "1", Fun: "test.ping"}).SaltMap()
	now := time.Now()
	rq, err := crypt.PackageRequest(session, nkey, "m1", ret, "fedcba9876543210fedcba9876543210", now, crypt.OAEPSHA1, crypt.PKCS1v15SHA1)
	must(t, err)
	frame, err := protocol.Marshal(rq)
	must(t, err)
	got, err := protocol.DecodeRequest(frame)
	must(t, err)
	if !ValidID(master.Dir, got.ID) {
		t.Fatalf("invalid id %q", got.ID)
	}
	npub, err := crypt.LoadPublicKey(master.Path(Accepted, got.ID))
	must(t, err)
	srvSession, err := crypt.NewCrypticle(sessions[got.ID])
	must(t, err)
	load, nonce, err := crypt.OpenRequest(srvSession, npub, got, time.Minute, now)
	must(t, err)
	if _, err := protocol.ParseReturn(load); err != nil {
		t.Fatal(err)
	}
	answer, err := srvSession.Dumps(true, nonce)
	must(t, err)
	if v, err := session.Loads(answer, "fedcba9876543210fedcba9876543210"); err != nil || v != true {
		t.Fatalf("reply = %v, %v", v, err)
	}

	// A publication with the master-wide AES key.
	pubAES, err := crypt.NewCrypticle(aesKey)
	must(t, err)
	job := (&protocol.Job{Fun: "test.ping", Tgt: "m1", JID: protocol.NewJID(now), TgtType: "glob", User: "root"}).SaltMap()
	p, err := crypt.WrapPublish(pubAES, mkey, job, 1, crypt.PKCS1v15SHA1)
	must(t, err)
	pframe, err := protocol.Marshal(p)
	must(t, err)
	pp, err := protocol.DecodePublish(pframe)
	must(t, err)
	minionAES, err := crypt.NewCrypticle(keys.AES)
	must(t, err)
	pl, err := crypt.OpenPublish(minionAES, masterPub, pp, true)
	must(t, err)
	if j, err := protocol.ParseJob(pl.(*ordered.Map)); err != nil || j.Fun != "test.ping" {
		t.Fatalf("job %+v, %v", j, err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
