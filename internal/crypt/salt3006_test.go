package crypt

import (
	"crypto/rsa"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
)

// The vectors in testdata/salt3006 are frames captured on the wire on
// 2026-12-01 between real Salt 3006.19 daemons (run from source, commit
// c9c5ab41) and Brine's daemons, by a TCP relay on the request port and a
// libzmq SUB socket on the publish port; see docs/INTEROP.md. The keys
// are throwaway keys made for the capture by the daemons themselves.
//
//   - salt_minion_to_brine_master: a Salt minion signed in to a Brine
//     master, which answered its _auth, _pillar, fileserver, event and
//     _return requests and published test.ping and cmd.run; the Salt
//     minion accepted all of it (its returns are among the requests).
//   - brine_minion_to_salt_master: a Brine minion signed in to a Salt
//     master, which answered and published; the Salt master accepted the
//     Brine minion's requests (its replies are among the replies).
type salt3006Exchange struct {
	Note          string   `json:"note"`
	MinionID      string   `json:"minion_id"`
	MinionKey     string   `json:"minion_key"`
	MasterKey     string   `json:"master_key"`
	AuthRequest   string   `json:"auth_request"`
	AuthReply     string   `json:"auth_reply"`
	PillarRequest string   `json:"pillar_request"`
	PillarReply   string   `json:"pillar_reply"`
	Requests      []string `json:"requests"`
	Replies       []string `json:"replies"`
	Publishes     []string `json:"publishes"`
}

func loadSalt3006(t *testing.T) map[string]salt3006Exchange {
	t.Helper()
	data, err := os.ReadFile("testdata/salt3006/vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]salt3006Exchange
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func salt3006Key(t *testing.T, name string) *rsa.PrivateKey {
	t.Helper()
	k, err := LoadPrivateKey(filepath.Join("testdata/salt3006", name+".pem"), "")
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// openAuth checks a captured _auth request from minion (signed in as id)
// and the master's reply to it, and returns the keys the reply carries.
func openAuth(t *testing.T, reqHex, replyHex, id string, minion, master *rsa.PrivateKey) AuthKeys {
	t.Helper()
	req, err := protocol.DecodeRequest(unhex(t, reqHex))
	if err != nil {
		t.Fatal(err)
	}
	load, _ := req.Load.(*ordered.Map)
	if req.Enc != protocol.EncClear || load == nil || load.Value("cmd") != "_auth" {
		t.Fatalf("auth request: enc %q load %v", req.Enc, req.Load)
	}
	a, err := protocol.ParseAuthRequest(load)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := ParsePublicKey([]byte(a.Pub))
	if err != nil || a.ID != id || !pub.Equal(&minion.PublicKey) {
		t.Fatalf("auth request id %q, pub %v: %v", a.ID, pub, err)
	}
	var token []byte
	if a.Token != nil {
		if token, err = Decrypt(master, a.Token, a.EncAlgo); err != nil {
			t.Fatalf("auth token does not open with the master key: %v", err)
		}
	}
	v, err := protocol.Unmarshal(unhex(t, replyHex))
	if err != nil {
		t.Fatal(err)
	}
	sc, _, err := protocol.DecodeSignedClear(v)
	if err != nil {
		t.Fatal(err)
	}
	body, err := OpenSignedClear(&master.PublicKey, sc, a.SigAlgo)
	if err != nil {
		t.Fatalf("auth reply signature: %v", err)
	}
	reply, err := protocol.ParseAuthReply(body.(*ordered.Map))
	if err != nil {
		t.Fatal(err)
	}
	keys, err := OpenAuthReply(minion, &master.PublicKey, reply, token, a.EncAlgo)
	if err != nil {
		t.Fatalf("auth reply does not open: %v", err)
	}
	return keys
}

// openRequests opens each captured "aes" request with the session key
// and returns the loads by cmd, checking each reply decrypts with the
// request's nonce.
func openRequests(t *testing.T, keys AuthKeys, minion *rsa.PrivateKey, reqs, replies []string) map[string][]*ordered.Map {
	t.Helper()
	sess, err := NewCrypticle(keys.Session)
	if err != nil {
		t.Fatal(err)
	}
	byCmd := map[string][]*ordered.Map{}
	for i, h := range reqs {
		req, err := protocol.DecodeRequest(unhex(t, h))
		if err != nil {
			t.Fatal(err)
		}
		load, nonce, err := OpenRequest(sess, &minion.PublicKey, req, 0, time.Time{})
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		cmd, _ := load.Value("cmd").(string)
		byCmd[cmd] = append(byCmd[cmd], load)
		if i < len(replies) {
			rv, err := protocol.Unmarshal(unhex(t, replies[i]))
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := protocol.AsBytes(rv)
			if _, err := sess.Loads(raw, nonce); err != nil {
				t.Errorf("reply %d to %s does not open with its request's nonce: %v", i, cmd, err)
			}
		}
	}
	return byCmd
}

// openPublishes decrypts captured publish frames with the AES key and
// returns the jobs.
func openPublishes(t *testing.T, keys AuthKeys, master *rsa.PrivateKey, frames []string) []*protocol.Job {
	t.Helper()
	aes, err := NewCrypticle(keys.AES)
	if err != nil {
		t.Fatal(err)
	}
	var jobs []*protocol.Job
	for i, h := range frames {
		p, err := protocol.DecodePublish(unhex(t, h))
		if err != nil {
			t.Fatal(err)
		}
		v, err := OpenPublish(aes, &master.PublicKey, p, p.Sig != nil)
		if err != nil {
			t.Fatalf("publish %d: %v", i, err)
		}
		job, err := protocol.ParseJob(v.(*ordered.Map))
		if err != nil {
			t.Fatalf("publish %d: %v", i, err)
		}
		jobs = append(jobs, job)
	}
	return jobs
}

// openPillar opens a _pillar request and the master's private reply.
func openPillar(t *testing.T, keys AuthKeys, minion, master *rsa.PrivateKey, reqHex, replyHex string) *ordered.Map {
	t.Helper()
	byCmd := openRequests(t, keys, minion, []string{reqHex}, nil)
	load := byCmd[protocol.CmdPillar]
	if len(load) != 1 {
		t.Fatalf("pillar request: %v", byCmd)
	}
	req, _ := protocol.DecodeRequest(unhex(t, reqHex))
	sess, _ := NewCrypticle(keys.Session)
	_, nonce, _ := OpenRequest(sess, &minion.PublicKey, req, 0, time.Time{})
	rv, err := protocol.Unmarshal(unhex(t, replyHex))
	if err != nil {
		t.Fatal(err)
	}
	p, err := OpenPrivate(minion, &master.PublicKey, rv.(*ordered.Map), "pillar", nonce, req.EncAlgo, req.SigAlgo)
	if err != nil {
		t.Fatalf("pillar reply: %v", err)
	}
	pm, _ := p.(*ordered.Map)
	return pm
}

func hasFun(jobs []*protocol.Job, fun string) bool {
	for _, j := range jobs {
		if j.Fun == fun {
			return true
		}
	}
	return false
}

func returned(loads []*ordered.Map, fun string) []any {
	var out []any
	for _, l := range loads {
		r, err := protocol.ParseReturn(l)
		if err == nil && r.Fun == fun {
			out = append(out, r.Return)
		}
	}
	return out
}

// TestSalt3006Vectors decodes, verifies and decrypts both captures
// with Brine's code: the auth exchange (token, signed reply, AES and
// session keys), the publishes of test.ping and cmd.run, every "aes"
// request with the reply to it under the request's nonce, the minion's
// _return loads and the _pillar private reply.
func TestSalt3006Vectors(t *testing.T) {
	all := loadSalt3006(t)
	for _, name := range []string{"salt_minion_to_brine_master", "brine_minion_to_salt_master"} {
		t.Run(name, func(t *testing.T) {
			v, ok := all[name]
			if !ok {
				t.Fatalf("vectors.json has no %s", name)
			}
			minion, master := salt3006Key(t, v.MinionKey), salt3006Key(t, v.MasterKey)
			keys := openAuth(t, v.AuthRequest, v.AuthReply, v.MinionID, minion, master)
			jobs := openPublishes(t, keys, master, v.Publishes)
			if !hasFun(jobs, "test.ping") || !hasFun(jobs, "cmd.run") {
				t.Errorf("publishes: %+v", jobs)
			}
			byCmd := openRequests(t, keys, minion, v.Requests, v.Replies)
			if got := returned(byCmd[protocol.CmdReturn], "test.ping"); len(got) == 0 || got[0] != true {
				t.Errorf("test.ping returns: %v (cmds %v)", got, keysOf(byCmd))
			}
			if got := returned(byCmd[protocol.CmdReturn], "cmd.run"); len(got) == 0 || got[0] != "interop" {
				t.Errorf("cmd.run returns: %v", got)
			}
			p := openPillar(t, keys, minion, master, v.PillarRequest, v.PillarReply)
			if p.Value("greeting") != "hello-from-pillar" {
				t.Errorf("pillar: %v", p)
			}
		})
	}
}

func keysOf(m map[string][]*ordered.Map) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
