package main

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/crypt"
	"github.com/brinesalt/brine/internal/jobcache"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
	"github.com/brinesalt/brine/state/target"
)

// The benchmarks here are the floors of one local_async round
// (docs/BENCHMARKS.md "salt-api (issue 11)"): what a publication, a
// return, the job cache and an HTTPS request each cost on this machine,
// one core, whatever the daemons around them do.
//
//	go test ./bench/apibench -run '^$' -bench Floor -benchtime 2s

// loopCPU runs body as the benchmark's loop and reports the process's
// CPU time (user + system, every goroutine) per op beside the wall
// time: on a shared machine the wall time is stretched by whoever else
// runs, the CPU time much less.
func loopCPU(b *testing.B, body func() error) {
	b.Helper()
	c0 := cpuTime()
	for b.Loop() {
		if err := body(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime()-c0)/float64(b.N), "cpu-ns/op")
}

// pubLoad is the load of a local_async test.ping to one minion.
func pubLoad(jid string) *ordered.Map {
	return (&protocol.Job{Fun: "test.ping", Arg: []any{}, Tgt: "api-00001", JID: jid, TgtType: "glob",
		User: "apibench", Kwargs: ordered.New()}).SaltMap()
}

func floorKeys(b *testing.B) (*crypt.Crypticle, *crypt.Crypticle) {
	b.Helper()
	aes, err := crypt.NewCrypticle(crypt.GenerateKeyString())
	if err != nil {
		b.Fatal(err)
	}
	sess, err := crypt.NewCrypticle(crypt.GenerateKeyString())
	if err != nil {
		b.Fatal(err)
	}
	return aes, sess
}

// BenchmarkFloorPublish is the master's part of a publication:
// PubServerChannel.wrap_payload with sign_pub_messages (Salt 3006's
// master default, an RSA-2048 PKCS#1 v1.5 SHA-1 signature) and without,
// then the frame encoded.
func BenchmarkFloorPublish(b *testing.B) {
	key, err := crypt.GenerateKey(2048)
	if err != nil {
		b.Fatal(err)
	}
	aes, _ := floorKeys(b)
	load := pubLoad("20261202061500123456")
	for _, c := range []struct{ name, algo string }{{"signed", crypt.PKCS1v15SHA1}, {"unsigned", ""}} {
		b.Run(c.name, func(b *testing.B) {
			serial := 0
			loopCPU(b, func() error {
				serial++
				p, err := crypt.WrapPublish(aes, key, load, serial, c.algo)
				if err == nil {
					_, err = protocol.Marshal(p)
				}
				return err
			})
		})
	}
}

// BenchmarkFloorOpenPublish is one minion's part: the signature checked
// and the load decrypted.
func BenchmarkFloorOpenPublish(b *testing.B) {
	key, err := crypt.GenerateKey(2048)
	if err != nil {
		b.Fatal(err)
	}
	aes, _ := floorKeys(b)
	p, err := crypt.WrapPublish(aes, key, pubLoad("20261202061500123456"), 1, crypt.PKCS1v15SHA1)
	if err != nil {
		b.Fatal(err)
	}
	loopCPU(b, func() error {
		_, err := crypt.OpenPublish(aes, &key.PublicKey, p, true)
		return err
	})
}

// BenchmarkFloorDropPublish is the part of each minion a publication
// does not target: since the minion matches before it verifies
// (docs/SECURITY.md), the load is decrypted, parsed and matched, and
// the signature never checked. Every serial is new, as on the wire.
func BenchmarkFloorDropPublish(b *testing.B) {
	key, err := crypt.GenerateKey(2048)
	if err != nil {
		b.Fatal(err)
	}
	aes, _ := floorKeys(b)
	const n = 1024
	pubs := make([]*protocol.Publish, n)
	for i := range pubs {
		if pubs[i], err = crypt.WrapPublish(aes, key, pubLoad("20261202061500123456"), i+1, crypt.PKCS1v15SHA1); err != nil {
			b.Fatal(err)
		}
	}
	self := &target.Minion{ID: "api-00002", Grains: ordered.New(), Pillar: ordered.New()}
	i := 0
	loopCPU(b, func() error {
		if i%n == 0 {
			// The serials start over with a fresh Crypticle of the same key.
			aes, _ = crypt.NewCrypticle(aes.KeyString())
		}
		v, err := aes.Loads(pubs[i%n].Load, "")
		i++
		if err != nil {
			return err
		}
		load, _ := v.(*ordered.Map)
		job, err := protocol.ParseJob(load)
		if err != nil {
			return err
		}
		kind, err := target.ParseKind(job.TgtType)
		if err != nil {
			return err
		}
		if ok, err := target.Match(job.Tgt, kind, self, target.Options{}); ok || err != nil {
			return fmt.Errorf("matched %v: %w", ok, err)
		}
		return nil
	})
}

// BenchmarkFloorReturn is a test.ping return over the request channel:
// the minion packages it (its cached token, the session key's AES and
// HMAC), the master opens it (decrypt, token check with the minion's
// public key) and seals the reply, the minion opens that.
func BenchmarkFloorReturn(b *testing.B) {
	minion, err := crypt.GenerateKey(2048)
	if err != nil {
		b.Fatal(err)
	}
	_, sess := floorKeys(b)
	ret := (&protocol.Return{ID: "api-00001", JID: "20261202061500123456", Fun: "test.ping", Return: true, Success: true}).SaltMap()
	ret.Set("cmd", "_return")
	// The minion signs its token once (minion/request.go).
	tok, err := crypt.RequestToken(minion)
	if err != nil {
		b.Fatal(err)
	}
	const nonce = "0123456789abcdef0123456789abcdef"
	loopCPU(b, func() error {
		now := time.Now()
		stamped := ret.Copy()
		protocol.Stamp{Nonce: nonce, TS: now.Unix(), Tok: tok, ID: "api-00001"}.Apply(stamped)
		enc, err := sess.Dumps(stamped, "")
		if err != nil {
			return err
		}
		frame, err := protocol.Marshal(&protocol.Request{Enc: protocol.EncAES, Load: enc, Version: protocol.RequestVersion,
			ID: "api-00001", EncAlgo: crypt.OAEPSHA1, SigAlgo: crypt.PKCS1v15SHA1})
		if err != nil {
			return err
		}
		req, err := protocol.DecodeRequest(frame)
		if err != nil {
			return err
		}
		_, got, err := crypt.OpenRequest(sess, &minion.PublicKey, req, 0, now)
		if err != nil {
			return err
		}
		reply, err := sess.Dumps(true, got)
		if err != nil {
			return err
		}
		_, err = sess.Loads(reply, got)
		return err
	})
}

// BenchmarkFloorJobCache is the job cache's writes for one local_async
// test.ping to one minion (prep_jid, save_load, the return), on the disk
// apibench's masters use (/var/tmp) and on a tmpfs (/dev/shm).
func BenchmarkFloorJobCache(b *testing.B) {
	for _, c := range []struct{ name, dir string }{{"disk", "/var/tmp"}, {"tmpfs", "/dev/shm"}} {
		b.Run(c.name, func(b *testing.B) {
			dir, err := os.MkdirTemp(c.dir, "apibench-floor")
			if err != nil {
				b.Skip(err) // a machine without /dev/shm has no tmpfs row
			}
			defer os.RemoveAll(dir)
			jc := jobcache.New(dir)
			ctx := context.Background()
			loopCPU(b, func() error {
				jid, err := jc.PrepJID(ctx, "")
				if err != nil {
					return err
				}
				if err := jc.SaveLoad(ctx, jid, pubLoad(jid), []string{"api-00001"}); err != nil {
					return err
				}
				ret := (&protocol.Return{ID: "api-00001", JID: jid, Fun: "test.ping", Return: true, Success: true}).SaltMap()
				return jc.Returner(ctx, ret)
			})
		})
	}
}

// BenchmarkFloorHTTPS is one request of the load's loop (POST / then GET
// /jobs/<jid>, both timed) over kept-alive HTTPS on loopback against the
// fixed-answer server: the client's and the server's TLS, HTTP and JSON
// work together, with no API behind it.
func BenchmarkFloorHTTPS(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url, err := floorServer(ctx)
	if err != nil {
		b.Fatal(err)
	}
	a := newAPI(url, 1)
	loopCPU(b, func() error {
		jid, err := a.localAsync(ctx, "api-00001", "test.ping")
		if err != nil {
			return err
		}
		return a.do(ctx, "GET", "/jobs/"+jid, nil, nil)
	})
}
