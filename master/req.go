package master

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/brinesalt/brine/internal/crypt"
	"github.com/brinesalt/brine/internal/jobcache"
	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/pki"
	"github.com/brinesalt/brine/internal/protocol"
	"github.com/brinesalt/brine/internal/transport"
)

// badLoad is the master's refusal, a clear string (handle_message).
var badLoad = mustPack("bad load")

func mustPack(v any) []byte {
	b, err := protocol.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// handle is ReqServerChannel.handle_message for one request frame.
// Garbage, unknown senders, bad tokens and replays get "bad load" and a
// log line; nothing a peer sends can stop the worker.
func (m *Master) handle(ctx context.Context, peer string, body []byte) []byte {
	req, err := protocol.DecodeRequest(body)
	if err != nil {
		m.log.Warn("bad load received on socket", "peer", peer, logattr.Err, err)
		return badLoad
	}
	switch req.Enc {
	case protocol.EncClear:
		load, ok := req.Load.(*ordered.Map)
		if ok && load.Value("cmd") == protocol.CmdPing {
			// ClearFuncs.ping: the load back, for status.ping_master
			// and a failover minion's alive and failback checks.
			return mustPack(load)
		}
		if !ok || load.Value("cmd") != protocol.CmdAuth {
			m.log.Warn("clear request that is not _auth dropped", "peer", peer)
			return badLoad
		}
		return m.auth(peer, req, load)
	case protocol.EncAES:
		return m.handleAES(ctx, peer, req)
	}
	m.log.Warn("unknown request encoding", "peer", peer, "enc", req.Enc)
	return badLoad
}

// auth is ReqServerChannel._auth.
func (m *Master) auth(peer string, req *protocol.Request, load *ordered.Map) []byte {
	a, err := protocol.ParseAuthRequest(load)
	if err != nil {
		m.log.Warn("bad _auth load", "peer", peer, logattr.Err, err)
		return badLoad
	}
	o := m.o.Auth
	if o.MaxMinions > 0 {
		m.authed.Range(func(k, _ any) bool { o.Connected = append(o.Connected, k.(string)); return true })
	}
	out, err := m.pki.Authorize(a.ID, a.Pub, a.AutosignGrains, o)
	if err != nil {
		m.log.Warn("authentication refused", "id", a.ID, logattr.Err, err)
	}
	if out == nil {
		return badLoad
	}
	if out.Act != "" || out.Accepted {
		m.bus.Fire(protocol.AuthTag(), out.Event)
	}
	var reply any = protocol.AuthRefusal(out.Reply(), a.Nonce)
	if out.Accepted {
		npub, err := crypt.ParsePublicKey([]byte(a.Pub))
		if err != nil {
			m.log.Warn("minion key unreadable", "id", a.ID, logattr.Err, err)
			return badLoad
		}
		sess, err := m.sessionKey(a.ID)
		if err != nil {
			m.log.Error("session key", "id", a.ID, logattr.Err, err)
			return badLoad
		}
		aes, sig := m.aes.keyAndSig()
		r, err := crypt.BuildAuthReply(m.key, npub, a, crypt.AuthKeys{AES: aes.KeyString(), Session: sess.KeyString(), AESSig: sig}, m.pub, m.o.PublishPort)
		if err != nil {
			m.log.Warn("auth reply", "id", a.ID, logattr.Err, err)
			return badLoad
		}
		r.PubSig = m.pubSig
		reply = r
		m.authed.Store(a.ID, time.Now())
		m.log.Info("authenticated", "id", a.ID)
	} else {
		m.log.Info("authentication not accepted", "id", a.ID, "act", out.Act, "ret", out.Reply())
	}
	if req.Version < 2 {
		b, err := protocol.Marshal(reply)
		if err != nil {
			return badLoad
		}
		return b
	}
	sc, err := crypt.SignClear(m.key, reply, a.SigAlgo)
	if err != nil {
		m.log.Warn("sign auth reply", "id", a.ID, logattr.Err, err)
		return badLoad
	}
	b, err := protocol.Marshal(sc)
	if err != nil {
		return badLoad
	}
	return b
}

// handleAES opens a version 3 encrypted request and dispatches it to the
// AESFuncs method its cmd names.
func (m *Master) handleAES(ctx context.Context, peer string, req *protocol.Request) []byte {
	if req.Version < 3 || !pki.ValidID(m.o.PKIDir, req.ID) {
		m.log.Warn("request without a valid id dropped", "peer", peer, "version", req.Version)
		return badLoad
	}
	npub, ok := m.acceptedKey(req.ID)
	if !ok {
		m.log.Warn("request from a minion that is not accepted", "id", req.ID, "peer", peer)
		return badLoad
	}
	sess, err := m.sessionKey(req.ID)
	if err != nil {
		return badLoad
	}
	load, nonce, err := crypt.OpenRequest(sess, npub, req, m.o.RequestTTL, time.Now())
	if err != nil {
		if errors.Is(err, crypt.ErrAuthentication) {
			m.log.Debug("request did not decrypt with the session key", "id", req.ID)
		} else {
			m.log.Warn("bad load from minion", "id", req.ID, logattr.Err, err)
		}
		return badLoad
	}
	if nonce != "" && m.replayed(req.ID, nonce) {
		m.log.Warn("replayed request dropped", "id", req.ID, "peer", peer)
		return badLoad
	}
	// The load opened with the session key of an accepted minion: its
	// address may now send loads up to max_message (transport/limits.go).
	transport.Authenticated(ctx)
	cmd, _ := load.Value("cmd").(string)
	var ret any
	switch cmd {
	case protocol.CmdReturn:
		m.noteSelfReturn(req.ID)
		ret = m.onReturn(ctx, load)
	case protocol.CmdPillar:
		p := m.onPillar(ctx, req.ID, load)
		sealed, err := crypt.SealPrivate(m.key, npub, p, "pillar", nonce, orAlgo(req.EncAlgo, crypt.OAEPSHA1), orAlgo(req.SigAlgo, crypt.PKCS1v15SHA1))
		if err != nil {
			m.log.Error("seal pillar", "id", req.ID, logattr.Err, err)
			return badLoad
		}
		return mustPack(sealed)
	case protocol.CmdMinionEvent:
		ret = m.onMinionEvent(ctx, req.ID, load)
	case protocol.CmdSyndicReturn:
		ret = m.onSyndicReturn(ctx, req.ID, load)
	case protocol.CmdServeFile, protocol.CmdFileHash, protocol.CmdFileList, protocol.CmdFileEnvs,
		protocol.CmdFileFind, protocol.CmdDirList, protocol.CmdFileListEmptyDirs, protocol.CmdSymlinkList:
		ret = m.fileServer(cmd, load)
	case protocol.CmdMasterOpts:
		ret = m.masterOpts(load)
	case protocol.CmdMine:
		ret = m.onMine(req.ID, load)
	case protocol.CmdMineGet:
		ret = m.onMineGet(req.ID, load)
	case protocol.CmdMineDelete:
		ret = m.onMineDelete(req.ID, load)
	case protocol.CmdMineFlush:
		ret = m.onMineFlush(req.ID)
	case cmdMinionPub, cmdMinionRunner, cmdPubRet:
		ret = m.onPeer(ctx, req.ID, cmd, load)
	case protocol.CmdMasterTops:
		// Brine has no master_tops modules; Salt's master answers {} when
		// none is configured (salt/daemons/masterapi.py _master_tops),
		// and a Salt minion's HighState iterates the answer.
		ret = ordered.New()
	default:
		m.log.Warn("unknown request command", "id", req.ID, "cmd", cmd)
		ret = false
	}
	enc, err := sess.Dumps(ret, nonce)
	if err != nil {
		m.log.Error("encrypt reply", "id", req.ID, logattr.Err, err)
		return badLoad
	}
	return mustPack(enc)
}

func orAlgo(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// replayed records a request nonce and reports whether it was seen
// before; nonces are kept for 15 minutes.
func (m *Master) replayed(id, nonce string) bool {
	return m.seen.record(id + "\x00" + nonce)
}

// nonces holds the request nonces seen in the last 15 minutes, by when
// each was seen; mu guards at. Its zero value is empty and ready.
type nonces struct {
	mu sync.Mutex
	at map[string]time.Time
}

// record notes k and reports whether it was there already.
func (n *nonces) record(k string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if _, ok := n.at[k]; ok {
		return true
	}
	if n.at == nil {
		n.at = map[string]time.Time{}
	}
	n.at[k] = time.Now()
	return false
}

// prune forgets the nonces older than 15 minutes.
func (n *nonces) prune(now time.Time) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for k, t := range n.at {
		if now.Sub(t) > 15*time.Minute {
			delete(n.at, k)
		}
	}
}

// onReturn is AESFuncs._return: store in the job cache and fire
// salt/job/<jid>/ret/<id>. A second return is dropped as a replay
// (where the job cache can tell: local_cache).
func (m *Master) onReturn(ctx context.Context, load *ordered.Map) any {
	r, err := protocol.ParseReturn(load)
	if err != nil {
		m.log.Warn("bad _return load", logattr.Err, err)
		return false
	}
	jid, err := m.storeReturn(ctx, load, r)
	if jid != r.JID {
		load = load.Copy()
		load.Set("jid", jid)
	}
	if err != nil {
		if errors.Is(err, jobcache.ErrDuplicate) {
			m.log.Error("An extra return was detected from minion, please verify the minion, this could be a replay attack", "id", r.ID, logattr.JID, r.JID)
			return false
		}
		if !errors.Is(err, jobcache.ErrUnknownJob) {
			m.log.Warn("save return", logattr.Err, err)
		}
	}
	ev := load.Copy()
	ev.Delete("cmd")
	ev.Delete("ts")
	m.bus.Fire(protocol.JobReturnTag(r.JID, r.ID), ev)
	return true
}

// onMinionEvent is AESFuncs._minion_event: the events a minion sends
// ("events": [{tag, data}] or a single tag/data) are fired on the bus;
// a syndic's batch carries a pretag (syndic/<id>) and each of its events
// is fired a second time under it (master/syndic.go).
func (m *Master) onMinionEvent(ctx context.Context, id string, load *ordered.Map) any {
	if evs, ok := load.Value("events").([]any); ok {
		pretag, _ := load.Value("pretag").(string)
		for _, e := range evs {
			if em, ok := e.(*ordered.Map); ok {
				m.fireMinionEvent(em)
				if pretag != "" {
					if tag, _ := em.Value("tag").(string); tag != "" {
						data, _ := em.Value("data").(*ordered.Map)
						m.bus.Fire(pretagged(pretag, tag), data)
					}
				}
				m.storeSyndicMinions(ctx, id, em)
			}
		}
		return true
	}
	m.fireMinionEvent(load)
	return true
}

func (m *Master) fireMinionEvent(e *ordered.Map) {
	tag, _ := e.Value("tag").(string)
	if tag == "" {
		return
	}
	data, _ := e.Value("data").(*ordered.Map)
	m.bus.Fire(tag, data)
}
