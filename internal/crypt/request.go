package crypt

import (
	"crypto/rsa"
	"fmt"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
)

// PackageRequest is AsyncReqChannel._package_load for an encrypted
// (version 3) request: the load is stamped with nonce, ts, tok and id,
// encrypted with the minion's session Crypticle (without a nonce prefix)
// and wrapped in the "aes" envelope. The load is copied, not changed.
func PackageRequest(session *Crypticle, minion *rsa.PrivateKey, id string, load *ordered.Map, nonce string, now time.Time, encAlgo, sigAlgo string) (*protocol.Request, error) {
	tok, err := RequestToken(minion)
	if err != nil {
		return nil, fmt.Errorf("package request: %w", err)
	}
	stamped := load.Copy()
	protocol.Stamp{Nonce: nonce, TS: now.Unix(), Tok: tok, ID: id}.Apply(stamped)
	enc, err := session.Dumps(stamped, "")
	if err != nil {
		return nil, fmt.Errorf("package request: %w", err)
	}
	return &protocol.Request{Enc: protocol.EncAES, Load: enc, Version: protocol.RequestVersion,
		ID: id, EncAlgo: encAlgo, SigAlgo: sigAlgo}, nil
}

// OpenRequest is the master's handling of a version 3 "aes" request
// (ReqServerChannel.handle_message, _decode_payload, validate_token):
// the load is decrypted with the session key of the envelope's id, its
// nonce taken out, its ts checked against ttl (request_server_ttl; 0
// disables), its id compared with the envelope's, and its tok verified
// with the minion's accepted key and removed. Failures wrap
// protocol.ErrBadLoad, or ErrAuthentication for a bad HMAC. The nonce
// is returned for the reply (session.Dumps(ret, nonce)). The caller
// checks the envelope id (pki.ValidID) before choosing its session key.
func OpenRequest(session *Crypticle, minion *rsa.PublicKey, r *protocol.Request, ttl time.Duration, now time.Time) (*ordered.Map, string, error) {
	enc, ok := protocol.AsBytes(r.Load)
	if !ok {
		return nil, "", fmt.Errorf("open request: load is not ciphertext: %w", protocol.ErrBadLoad)
	}
	v, err := session.Loads(enc, "")
	if err != nil {
		return nil, "", fmt.Errorf("open request from %s: %w", r.ID, err)
	}
	load, ok := v.(*ordered.Map)
	if !ok {
		return nil, "", fmt.Errorf("open request from %s: load is not a map: %w", r.ID, protocol.ErrBadLoad)
	}
	nonce, _ := load.Value("nonce").(string)
	load.Delete("nonce")
	if ttl > 0 {
		ts, ok := protocol.AsInt(load.Value("ts"))
		if !ok || now.Sub(time.Unix(int64(ts), 0)) > ttl {
			return nil, "", fmt.Errorf("open request from %s: expired ttl: %w", r.ID, protocol.ErrBadLoad)
		}
	}
	if id, _ := load.Value("id").(string); id != r.ID {
		return nil, "", fmt.Errorf("open request: id %q does not match envelope id %q: %w", id, r.ID, protocol.ErrBadLoad)
	}
	tok, _ := protocol.AsBytes(load.Value("tok"))
	load.Delete("tok")
	if tok == nil || !CheckRequestToken(minion, tok) {
		return nil, "", fmt.Errorf("open request from %s: token did not validate: %w", r.ID, protocol.ErrBadLoad)
	}
	return load, nonce, nil
}
