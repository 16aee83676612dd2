package protocol

import (
	"errors"
	"fmt"

	"github.com/brinesalt/brine/internal/ordered"
)

// Envelope encodings (the "enc" field).
const (
	EncClear = "clear"
	EncAES   = "aes"
	EncPub   = "pub"
)

// RequestVersion is the request-channel protocol version Salt 3006.19
// minions send (salt/channel/client.py _package_load): 2 and above sign
// replies and echo the nonce; 3 adds id, ts and tok to encrypted loads and
// encrypts them with the per-minion session key.
const RequestVersion = 3

// ErrBadLoad is the master's "bad load" refusal: an envelope that is not a
// map holding enc and load (salt/channel/server.py handle_message).
var ErrBadLoad = errors.New("bad load")

// Request is the envelope a minion sends on the request channel:
// {"enc", "load", "version"} and, for "aes", {"id", "enc_algo",
// "sig_algo"}. Load is a *ordered.Map when Enc is "clear" and the
// Crypticle ciphertext ([]byte) when it is "aes".
type Request struct {
	Enc     string
	Load    any
	Version int
	// ID, EncAlgo and SigAlgo are sent with "aes" loads only.
	ID, EncAlgo, SigAlgo string
}

// SaltMap returns the envelope in Salt's key order.
func (r *Request) SaltMap() *ordered.Map {
	m := ordered.FromPairs("enc", r.Enc, "load", r.Load, "version", r.Version)
	if r.Enc == EncAES {
		m.Set("id", r.ID)
		m.Set("enc_algo", r.EncAlgo)
		m.Set("sig_algo", r.SigAlgo)
	}
	return m
}

// Marshal packs the envelope for the wire.
func (r *Request) Marshal() ([]byte, error) { return Marshal(r) }

// DecodeRequest unpacks a request frame as the master's ReqServerChannel
// does: the message must be a map with enc and load; version is read with
// int() and is 0 when absent or not a number.
func DecodeRequest(frame []byte) (*Request, error) {
	v, err := Unmarshal(frame)
	if err != nil {
		return nil, fmt.Errorf("decode request: %w", err)
	}
	m, ok := v.(*ordered.Map)
	if !ok || !m.Has("enc") || !m.Has("load") {
		return nil, fmt.Errorf("decode request: %w", ErrBadLoad)
	}
	r := &Request{Load: m.Value("load")}
	r.Enc, _ = m.Value("enc").(string)
	r.Version = pyInt(m.Value("version"))
	r.ID, _ = m.Value("id").(string)
	r.EncAlgo, _ = m.Value("enc_algo").(string)
	r.SigAlgo, _ = m.Value("sig_algo").(string)
	return r, nil
}

// pyInt is Python's int() as handle_message applies it to version:
// integers, floats truncated, decimal text; anything else is 0.
func pyInt(v any) int {
	switch x := v.(type) {
	case int:
		return x
	case float64:
		return int(x)
	case bool:
		if x {
			return 1
		}
	case string:
		n := 0
		s := x
		neg := false
		if s != "" && (s[0] == '-' || s[0] == '+') {
			neg = s[0] == '-'
			s = s[1:]
		}
		if s == "" {
			return 0
		}
		for _, c := range s {
			if c < '0' || c > '9' {
				return 0
			}
			n = n*10 + int(c-'0')
		}
		if neg {
			return -n
		}
		return n
	}
	return 0
}

// SignedClear is a clear reply signed by the master (_clear_signed):
// {"enc": "clear", "load": msgpack(load), "sig": sign(load)}. Version 2+
// _auth replies take this form.
type SignedClear struct {
	Load []byte
	Sig  []byte
}

// SaltMap returns the reply in Salt's key order.
func (s *SignedClear) SaltMap() *ordered.Map {
	return ordered.FromPairs("enc", EncClear, "load", s.Load, "sig", s.Sig)
}

// DecodeSignedClear reads a signed clear reply; ok is false when the reply
// is the unsigned form {"enc": "clear", "load": {...}} instead, whose load
// is returned as plain.
func DecodeSignedClear(v any) (s *SignedClear, plain *ordered.Map, err error) {
	m, isMap := v.(*ordered.Map)
	if !isMap || !m.Has("load") {
		return nil, nil, fmt.Errorf("decode reply: %w", ErrBadLoad)
	}
	if lm, isMap := m.Value("load").(*ordered.Map); isMap {
		return nil, lm, nil
	}
	load, ok1 := AsBytes(m.Value("load"))
	sig, ok2 := AsBytes(m.Value("sig"))
	if !ok1 || !ok2 {
		return nil, nil, fmt.Errorf("decode reply: load or sig missing: %w", ErrBadLoad)
	}
	return &SignedClear{Load: load, Sig: sig}, nil, nil
}

// Publish is the frame the master publishes (PubServerChannel.wrap_payload):
// {"enc": "aes", "load": Crypticle.dumps(load), "sig_algo", "sig"}, the
// signature being over the encrypted load bytes. SigAlgo and Sig are empty
// when sign_pub_messages is off.
type Publish struct {
	Load    []byte
	SigAlgo string
	Sig     []byte
}

// SaltMap returns the frame in Salt's key order.
func (p *Publish) SaltMap() *ordered.Map {
	m := ordered.FromPairs("enc", EncAES, "load", p.Load)
	if p.Sig != nil {
		m.Set("sig_algo", p.SigAlgo)
		m.Set("sig", p.Sig)
	}
	return m
}

// DecodePublish unpacks a publish frame.
func DecodePublish(frame []byte) (*Publish, error) {
	v, err := Unmarshal(frame)
	if err != nil {
		return nil, fmt.Errorf("decode publish: %w", err)
	}
	m, ok := v.(*ordered.Map)
	if !ok || m.Value("enc") != EncAES {
		return nil, fmt.Errorf("decode publish: %w", ErrBadLoad)
	}
	p := &Publish{}
	if p.Load, ok = AsBytes(m.Value("load")); !ok {
		return nil, fmt.Errorf("decode publish: load is not bytes: %w", ErrBadLoad)
	}
	p.SigAlgo, _ = m.Value("sig_algo").(string)
	p.Sig, _ = AsBytes(m.Value("sig"))
	return p, nil
}
