package protocol

import (
	"fmt"

	"github.com/brinesalt/brine/internal/ordered"
)

// Command names carried in a load's "cmd".
const (
	CmdAuth         = "_auth"
	CmdReturn       = "_return"
	CmdSyndicReturn = "_syndic_return"
	CmdPillar       = "_pillar"
	CmdMinionEvent  = "_minion_event"
	// CmdPing is the clear "ping" of status.ping_master, which
	// ClearFuncs.ping answers with the load itself.
	CmdPing = "ping"
)

// Algorithm names exchanged in _auth and request envelopes (salt/crypt.py).
const (
	OAEPSHA1       = "OAEP-SHA1"
	OAEPSHA224     = "OAEP-SHA224"
	PKCS1v15SHA1   = "PKCS1v15-SHA1"
	PKCS1v15SHA224 = "PKCS1v15-SHA224"
)

// AuthRequest is the minion's sign-in load (AsyncAuth.minion_sign_in_payload).
type AuthRequest struct {
	ID      string
	Nonce   string // uuid4().hex
	EncAlgo string
	SigAlgo string
	// AutosignGrains is sent when the minion has autosign_grains set.
	AutosignGrains *ordered.Map
	// Token is RSA-OAEP(master pub, token), sent only when the minion has
	// the master's key cached.
	Token []byte
	// Pub is the minion's PEM public key, cleaned (salt.crypt.clean_key).
	Pub string
}

// SaltMap returns the load in Salt's key order.
func (a *AuthRequest) SaltMap() *ordered.Map {
	m := ordered.FromPairs("cmd", CmdAuth, "id", a.ID, "nonce", a.Nonce,
		"enc_algo", a.EncAlgo, "sig_algo", a.SigAlgo)
	if a.AutosignGrains != nil {
		m.Set("autosign_grains", a.AutosignGrains)
	}
	if a.Token != nil {
		m.Set("token", a.Token)
	}
	m.Set("pub", a.Pub)
	return m
}

// ParseAuthRequest reads an _auth load; missing algorithms default as in
// ReqServerChannel._auth (OAEP-SHA1, PKCS1v15-SHA1).
func ParseAuthRequest(m *ordered.Map) (*AuthRequest, error) {
	if m.Value("cmd") != CmdAuth {
		return nil, fmt.Errorf("parse _auth load: cmd is %v: %w", m.Value("cmd"), ErrBadLoad)
	}
	a := &AuthRequest{EncAlgo: OAEPSHA1, SigAlgo: PKCS1v15SHA1}
	var ok bool
	if a.ID, ok = m.Value("id").(string); !ok {
		return nil, fmt.Errorf("parse _auth load: id is not a string: %w", ErrBadLoad)
	}
	a.Nonce, _ = m.Value("nonce").(string)
	if s, ok := m.Value("enc_algo").(string); ok {
		a.EncAlgo = s
	}
	if s, ok := m.Value("sig_algo").(string); ok {
		a.SigAlgo = s
	}
	a.AutosignGrains, _ = m.Value("autosign_grains").(*ordered.Map)
	if m.Has("token") {
		a.Token, _ = AsBytes(m.Value("token"))
	}
	a.Pub, _ = m.Value("pub").(string)
	return a, nil
}

// AuthReply is the master's answer to an accepted _auth
// (ReqServerChannel._auth), before signing.
type AuthReply struct {
	PubKey      string // master.pub, cleaned
	PublishPort int
	// PubSig is base64 of the master_sign signature of PubKey, when
	// master_sign_pubkey is on.
	PubSig string
	// Token is RSA-OAEP(minion pub, token) (auth_mode < 2, token sent).
	Token []byte
	// AES is RSA-OAEP(minion pub, aes key string [+ "_|-" + token]).
	AES []byte
	// Session is RSA-OAEP(minion pub, per-minion session key string).
	Session []byte
	// Sig is the X9.31 private-key signature of sha256(aes).hexdigest().
	Sig   []byte
	Nonce string
}

// SaltMap returns the reply in Salt's key order.
func (a *AuthReply) SaltMap() *ordered.Map {
	m := ordered.FromPairs("enc", EncPub, "pub_key", a.PubKey, "publish_port", a.PublishPort)
	if a.PubSig != "" {
		m.Set("pub_sig", a.PubSig)
	}
	if a.Token != nil {
		m.Set("token", a.Token)
	}
	m.Set("aes", a.AES)
	m.Set("session", a.Session)
	m.Set("sig", a.Sig)
	if a.Nonce != "" {
		m.Set("nonce", a.Nonce)
	}
	return m
}

// ParseAuthReply reads an accepted _auth reply load.
func ParseAuthReply(m *ordered.Map) (*AuthReply, error) {
	a := &AuthReply{}
	var ok bool
	if a.PubKey, ok = m.Value("pub_key").(string); !ok {
		return nil, fmt.Errorf("parse _auth reply: no pub_key: %w", ErrBadLoad)
	}
	a.PublishPort, _ = AsInt(m.Value("publish_port"))
	a.PubSig, _ = m.Value("pub_sig").(string)
	a.Token, _ = AsBytes(m.Value("token"))
	a.AES, _ = AsBytes(m.Value("aes"))
	a.Session, _ = AsBytes(m.Value("session"))
	a.Sig, _ = AsBytes(m.Value("sig"))
	a.Nonce, _ = m.Value("nonce").(string)
	return a, nil
}

// AuthRefusal is the reply to an _auth that is not accepted: ret is false
// (rejected, denied), true (pending) or "full" (max_minions), plus the
// nonce when signed.
func AuthRefusal(ret any, nonce string) *ordered.Map {
	m := ordered.FromPairs("ret", ret)
	if nonce != "" {
		m.Set("nonce", nonce)
	}
	return m
}

// Job is the publish load (salt/master.py ClearFuncs._prep_pub) the master
// encrypts into a Publish frame.
type Job struct {
	Fun string
	Arg []any
	// Tgt is a string or, for list targets, a []any of ids.
	Tgt any
	JID string
	Ret string
	// Optional fields, set only when non-empty as Salt does.
	MasterID  string
	Delimiter string // only when not ":"
	ID        string
	TgtType   string
	To        int
	// Kwargs holds ret_config, metadata, module_executors, executor_opts
	// and ret_kwargs in that order when present.
	Kwargs *ordered.Map
	User   string
	// Serial is added by wrap_payload and popped by Crypticle.loads.
	Serial int
	// Relay is Brine's own: the ticket of a relayed copy (salt-cp
	// --relay, docs/RELAY.md), the controller's port and the run's key.
	// It travels only inside the encrypted publication: the master
	// keeps it out of the job cache and the event bus.
	Relay *ordered.Map
}

// SaltMap returns the load in Salt's key order.
func (j *Job) SaltMap() *ordered.Map {
	m := ordered.FromPairs("fun", j.Fun, "arg", orEmpty(j.Arg), "tgt", j.Tgt, "jid", j.JID, "ret", j.Ret)
	if j.MasterID != "" {
		m.Set("master_id", j.MasterID)
	}
	if j.Delimiter != "" && j.Delimiter != ":" {
		m.Set("delimiter", j.Delimiter)
	}
	if j.ID != "" {
		m.Set("id", j.ID)
	}
	if j.TgtType != "" {
		m.Set("tgt_type", j.TgtType)
	}
	if j.To != 0 {
		m.Set("to", j.To)
	}
	for _, k := range []string{"ret_config", "metadata", "module_executors", "executor_opts", "ret_kwargs"} {
		if v, ok := j.Kwargs.Get(k); ok {
			m.Set(k, v)
		}
	}
	if j.User != "" {
		m.Set("user", j.User)
	}
	if j.Serial != 0 {
		m.Set("serial", j.Serial)
	}
	if j.Relay != nil {
		m.Set("relay", j.Relay)
	}
	return m
}

// RecvRelayFun is Brine's own function behind salt-cp --relay
// (docs/RELAY.md, minion mode). Its one argument maps each destination
// path to {"sha256": …, "mode": …}; the publication's relay ticket
// ({"port": …, "key": hex}) says where the coordinator listens on the
// master's host and holds the run's key, which reaches the minion only
// inside the encrypted publication. The minion dials the coordinator,
// fetches the chunks from the peers it names (or from the coordinator
// itself), and places each file once its whole hash matched. It returns
// {dest: True | error text}, as cp.recv_chunked's results read.
const RecvRelayFun = "cp.recv_relay"

// ParseJob reads a publish load as a minion receives it.
func ParseJob(m *ordered.Map) (*Job, error) {
	j := &Job{Tgt: m.Value("tgt"), Kwargs: ordered.New()}
	var ok bool
	if j.Fun, ok = m.Value("fun").(string); !ok {
		return nil, fmt.Errorf("parse publish load: no fun: %w", ErrBadLoad)
	}
	if j.JID, ok = m.Value("jid").(string); !ok {
		return nil, fmt.Errorf("parse publish load: no jid: %w", ErrBadLoad)
	}
	j.Arg, _ = m.Value("arg").([]any)
	j.Ret, _ = m.Value("ret").(string)
	j.MasterID, _ = m.Value("master_id").(string)
	j.Delimiter, _ = m.Value("delimiter").(string)
	j.ID, _ = m.Value("id").(string)
	j.TgtType, _ = m.Value("tgt_type").(string)
	j.To, _ = AsInt(m.Value("to"))
	j.User, _ = m.Value("user").(string)
	j.Serial, _ = AsInt(m.Value("serial"))
	j.Relay, _ = m.Value("relay").(*ordered.Map)
	for _, k := range []string{"ret_config", "metadata", "module_executors", "executor_opts", "ret_kwargs"} {
		if v, ok := m.Get(k); ok {
			j.Kwargs.Set(k, v)
		}
	}
	return j, nil
}

// Return is a minion's job return (salt/minion.py _thread_return and
// _prepare_return_pub), sent as an "aes" request with cmd "_return".
type Return struct {
	ID      string
	Success bool
	Return  any
	Retcode int
	JID     string
	Fun     string
	FunArgs []any
	User    string
	// MasterID and Metadata are echoed from the publish load.
	MasterID string
	Metadata *ordered.Map
	Out      string
}

// SaltMap returns the load in Salt's key order: cmd and id, then the
// return dict as the minion built it.
func (r *Return) SaltMap() *ordered.Map {
	m := ordered.FromPairs("cmd", CmdReturn, "id", r.ID, "success", r.Success,
		"return", r.Return, "retcode", r.Retcode, "jid", r.JID, "fun", r.Fun,
		"fun_args", orEmpty(r.FunArgs))
	if r.User != "" {
		m.Set("user", r.User)
	}
	if r.MasterID != "" {
		m.Set("master_id", r.MasterID)
	}
	if r.Metadata != nil {
		m.Set("metadata", r.Metadata)
	}
	if r.Out != "" {
		m.Set("out", r.Out)
	}
	return m
}

// ParseReturn reads a _return load.
func ParseReturn(m *ordered.Map) (*Return, error) {
	if m.Value("cmd") != CmdReturn {
		return nil, fmt.Errorf("parse _return load: cmd is %v: %w", m.Value("cmd"), ErrBadLoad)
	}
	r := &Return{Return: m.Value("return")}
	var ok bool
	if r.ID, ok = m.Value("id").(string); !ok {
		return nil, fmt.Errorf("parse _return load: no id: %w", ErrBadLoad)
	}
	if r.JID, ok = m.Value("jid").(string); !ok {
		return nil, fmt.Errorf("parse _return load: no jid: %w", ErrBadLoad)
	}
	r.Success, _ = m.Value("success").(bool)
	r.Retcode, _ = AsInt(m.Value("retcode"))
	r.Fun, _ = m.Value("fun").(string)
	r.FunArgs, _ = m.Value("fun_args").([]any)
	r.User, _ = m.Value("user").(string)
	r.MasterID, _ = m.Value("master_id").(string)
	r.Metadata, _ = m.Value("metadata").(*ordered.Map)
	r.Out, _ = m.Value("out").(string)
	return r, nil
}

// PillarRequest is the minion's _pillar load (salt/pillar/__init__.py
// RemotePillar.compile_pillar), answered with send_private.
type PillarRequest struct {
	ID              string
	Grains          *ordered.Map
	Saltenv         any
	PillarEnv       any
	PillarOverride  *ordered.Map
	ExtraMinionData *ordered.Map
	Ver             string
}

// SaltMap returns the load in Salt's key order.
func (p *PillarRequest) SaltMap() *ordered.Map {
	m := ordered.FromPairs("id", p.ID, "grains", orMap(p.Grains), "saltenv", p.Saltenv,
		"pillarenv", p.PillarEnv, "pillar_override", orMap(p.PillarOverride),
		"extra_minion_data", orMap(p.ExtraMinionData), "ver", p.Ver, "cmd", CmdPillar)
	return m
}

// Stamp fields the master and minion add to an aes load before
// encryption (salt/channel/client.py _package_load, version 3).
type Stamp struct {
	Nonce string // uuid4().hex, echoed in the reply's Crypticle prefix
	TS    int64  // int(time.time())
	Tok   []byte // X9.31 signature of b"salt" with minion.pem
	ID    string
}

// Apply adds the stamp to load in Salt's order (nonce, ts, tok, id).
func (s Stamp) Apply(load *ordered.Map) {
	load.Set("nonce", s.Nonce)
	load.Set("ts", int(s.TS))
	load.Set("tok", s.Tok)
	load.Set("id", s.ID)
}

// TakeStamp removes nonce and tok from a decrypted load as the master's
// handle_message and validate_token do, returning them.
func TakeStamp(load *ordered.Map) Stamp {
	s := Stamp{}
	s.Nonce, _ = load.Value("nonce").(string)
	load.Delete("nonce")
	if ts, ok := AsInt(load.Value("ts")); ok {
		s.TS = int64(ts)
	}
	if tok, ok := load.Get("tok"); ok {
		s.Tok, _ = AsBytes(tok)
		load.Delete("tok")
	}
	s.ID, _ = load.Value("id").(string)
	return s
}

func orEmpty(a []any) []any {
	if a == nil {
		return []any{}
	}
	return a
}

func orMap(m *ordered.Map) *ordered.Map {
	if m == nil {
		return ordered.New()
	}
	return m
}
