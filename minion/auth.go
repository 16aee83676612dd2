package minion

import (
	"context"
	"errors"
	"fmt"

	"github.com/brinesalt/brine/internal/crypt"
	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
)

// errPending and errRejected are sign-in answers that make the minion
// wait and try again.
var (
	errPending  = errors.New("key pending acceptance")
	errRejected = errors.New("key rejected by the master")
	errFull     = errors.New("master has reached max_minions")
)

// state returns the current session, nil before the first sign-in.
func (m *Minion) state() *authState {
	m.stateMu.RLock()
	defer m.stateMu.RUnlock()
	return m.st
}

// authenticate signs in until accepted (AsyncAuth.authenticate). When
// another caller already re-authenticated past generation seen, its
// session is reused. A changed master key is fatal.
func (m *Minion) authenticate(ctx context.Context, seen int) (*authState, error) {
	m.authMu.Lock()
	defer m.authMu.Unlock()
	if st := m.state(); st != nil && st.generation > seen {
		return st, nil
	}
	wait := m.c.AcceptanceWaitTime
	for failed := 0; ; {
		st, err := m.signInCurrent(ctx)
		if err == nil {
			m.stateMu.Lock()
			m.authGen++
			st.generation = m.authGen
			m.st = st
			m.stateMu.Unlock()
			m.log.Info("authenticated with the master")
			return st, nil
		}
		if errors.Is(err, ErrMasterKeyChanged) {
			m.log.Error("The master key has changed, the salt master could have been subverted, verify salt master's public key", logattr.Err, err)
			return nil, err
		}
		switch {
		case errors.Is(err, errPending):
			m.log.Info("Waiting for the master to accept the minion's key", "retry_in", wait.String())
		case errors.Is(err, errRejected):
			m.log.Error("The Salt Master has rejected this minion's public key")
		default:
			m.log.Warn("sign-in failed", "master", m.req.Address(), logattr.Err, err)
			wait = min(wait, m.c.AuthTimeout)
			if failed++; m.roundsDone(failed) {
				// eval_master's error once master_tries rounds failed; the
				// daemon then keeps trying, as MinionManager does.
				m.log.Error("No master could be reached or all masters denied the minion's connection attempt.")
			}
			m.nextMaster()
		}
		if err := sleep(ctx, wait); err != nil {
			return nil, err
		}
		if m.c.AcceptanceWaitTimeMax > 0 && wait < m.c.AcceptanceWaitTimeMax {
			wait = min(wait+m.c.AcceptanceWaitTime, m.c.AcceptanceWaitTimeMax)
		} else {
			wait = m.c.AcceptanceWaitTime
		}
	}
}

// cachedMaster returns the pinned master key text.
func (m *Minion) cachedMaster() (string, bool) {
	if m.o.NoDisk {
		return m.pinnedPub, m.pinnedPub != ""
	}
	pub, ok, err := m.pki.MasterPub()
	if err != nil {
		return "", false
	}
	return pub, ok
}

// signIn is one AsyncAuth.sign_in: _auth with a fresh token (encrypted
// for the master when its key is pinned), the signed reply checked
// against the pinned key or master_finger, then the AES and session
// keys opened. Each step returns its own error; the sign-in wraps once.
func (m *Minion) signIn(ctx context.Context) (*authState, error) {
	st, err := m.signInSteps(ctx)
	if err != nil {
		return nil, fmt.Errorf("sign in: %w", err)
	}
	return st, nil
}

// authRequest is the _auth load and the token it carries, encrypted
// for the pinned master key when there is one.
type authRequest struct {
	load   *protocol.AuthRequest
	token  []byte
	cached string // the pinned master key, "" when none
}

func (m *Minion) signInSteps(ctx context.Context) (*authState, error) {
	ar, err := m.buildAuth()
	if err != nil {
		return nil, err
	}
	load, err := m.exchangeAuth(ctx, ar)
	if err != nil {
		return nil, err
	}
	if ret, ok := load.Get("ret"); ok {
		switch ret {
		case true:
			return nil, errPending
		case "full":
			return nil, errFull
		}
		return nil, errRejected
	}
	return m.openAuthReply(ar, load)
}

// buildAuth makes the _auth request with a fresh token and nonce.
func (m *Minion) buildAuth() (*authRequest, error) {
	ar := &authRequest{token: []byte(crypt.GenerateKeyString())}
	ar.load = &protocol.AuthRequest{ID: m.id, Nonce: newNonce(), EncAlgo: crypt.OAEPSHA1, SigAlgo: crypt.PKCS1v15SHA1, Pub: m.pub}
	cached, ok := m.cachedMaster()
	if !ok {
		return ar, nil
	}
	ar.cached = cached
	if mk, err := crypt.ParsePublicKey([]byte(cached)); err == nil {
		if ar.load.Token, err = crypt.Encrypt(mk, ar.token, ar.load.EncAlgo); err != nil {
			return nil, err
		}
	}
	return ar, nil
}

// exchangeAuth sends the request and returns the reply's load, its
// signature verified and its nonce matched.
func (m *Minion) exchangeAuth(ctx context.Context, ar *authRequest) (*ordered.Map, error) {
	frame, err := protocol.Marshal(&protocol.Request{Enc: protocol.EncClear, Load: ar.load, Version: protocol.RequestVersion})
	if err != nil {
		return nil, err
	}
	rctx, cancel := context.WithTimeout(ctx, m.signInTimeout())
	defer cancel()
	raw, err := m.req.Do(rctx, frame)
	if err != nil {
		return nil, err
	}
	v, err := protocol.Unmarshal(raw)
	if err != nil {
		return nil, err
	}
	sc, load, err := protocol.DecodeSignedClear(v)
	if err != nil {
		return nil, fmt.Errorf("%v: %w", v, err)
	}
	if sc != nil {
		if load, err = verifySignedReply(sc, ar, m.c.VerifyMasterPubkeySign); err != nil {
			return nil, err
		}
	}
	if n, ok := load.Value("nonce").(string); ok && n != ar.load.Nonce {
		return nil, crypt.ErrNonce
	}
	return load, nil
}

// verifySignedReply decodes a signed reply's load and checks its
// signature with the pinned key when there is one, else with the key the
// reply offers (which is then pinned by checkMaster). With
// verify_master_pubkey_sign a reply signed by another key than the
// pinned one is checked with the key it offers, whose own signature
// (pub_sig) checkMaster then verifies (multimaster_pki.rst).
func verifySignedReply(sc *protocol.SignedClear, ar *authRequest, signedKeys bool) (*ordered.Map, error) {
	body, err := protocol.Unmarshal(sc.Load)
	if err != nil {
		return nil, err
	}
	load, _ := body.(*ordered.Map)
	if load == nil {
		return nil, fmt.Errorf("reply load is not a map: %w", protocol.ErrBadLoad)
	}
	offered, _ := load.Value("pub_key").(string)
	verifyWith := ar.cached
	if verifyWith == "" {
		verifyWith = offered
	}
	if verifyWith == "" {
		return load, nil
	}
	mk, err := crypt.ParsePublicKey([]byte(verifyWith))
	if err != nil {
		return nil, err
	}
	if err := crypt.Verify(mk, sc.Load, sc.Sig, ar.load.SigAlgo); err != nil {
		if ar.cached != "" && offered != "" && crypt.CleanKey(offered) != ar.cached {
			if signedKeys {
				return verifyWithOffered(sc, load, offered, ar.load.SigAlgo)
			}
			return nil, ErrMasterKeyChanged
		}
		return nil, fmt.Errorf("reply signature: %w", err)
	}
	return load, nil
}

// openAuthReply checks the master's key and opens the AES and session
// keys of an accepted sign-in.
func (m *Minion) openAuthReply(ar *authRequest, load *ordered.Map) (*authState, error) {
	reply, err := protocol.ParseAuthReply(load)
	if err != nil {
		return nil, err
	}
	useToken, err := m.checkMaster(reply.PubKey, reply.PubSig, ar.load.Token != nil)
	if err != nil {
		return nil, err
	}
	mk, err := crypt.ParsePublicKey([]byte(reply.PubKey))
	if err != nil {
		return nil, err
	}
	var tok []byte
	if useToken {
		tok = ar.token
	}
	keys, err := crypt.OpenAuthReply(m.key, mk, reply, tok, ar.load.EncAlgo)
	if err != nil {
		return nil, err
	}
	aes, err := crypt.NewCrypticle(keys.AES)
	if err != nil {
		return nil, err
	}
	sess, err := crypt.NewCrypticle(keys.Session)
	if err != nil {
		return nil, err
	}
	return &authState{aes: aes, session: sess, masterKey: mk, pubPort: reply.PublishPort}, nil
}

// checkMaster is AsyncAuth.verify_master: the offered key must equal the
// pinned one, unless verify_master_pubkey_sign lets a key signed with
// master_sign.pub replace it; the first key met is pinned, after
// master_finger, when set, matched its fingerprint. useToken is false
// when the reply cannot carry the minion's token back (Salt's
// extract_aes with master_pub=False): the token went out encrypted for
// another key, or none went out.
func (m *Minion) checkMaster(offered, pubSig string, sentToken bool) (useToken bool, err error) {
	if err := m.checkAuthDeps(pubSig); err != nil {
		return false, err
	}
	cached, ok := m.cachedMaster()
	if ok && sentToken && !m.c.OpenMode {
		same := crypt.CleanKey(offered) == cached
		switch {
		case !same && !m.c.VerifyMasterPubkeySign:
			return false, ErrMasterKeyChanged
		case !same:
			return false, m.verifySigningMaster(offered, pubSig)
		case m.c.VerifyMasterPubkeySign && m.c.AlwaysVerifySignature:
			return true, m.verifySigningMaster(offered, pubSig)
		}
		return true, nil
	}
	if m.c.VerifyMasterPubkeySign {
		return false, m.verifySigningMaster(offered, pubSig)
	}
	if ok {
		return false, nil
	}
	if m.c.MasterFinger != "" {
		f, err := crypt.Finger(crypt.PemBody([]byte(offered)), crypt.DefaultHashType)
		if err != nil || f != m.c.MasterFinger {
			return false, fmt.Errorf("the master's fingerprint %s is not master_finger %s: %w", f, m.c.MasterFinger, ErrMasterKeyChanged)
		}
	}
	return false, m.pinMaster(offered)
}

// pinMaster caches the master key (minion_master.pub, or memory for a
// minion without a disk).
func (m *Minion) pinMaster(offered string) error {
	if m.o.NoDisk {
		m.pinnedPub = crypt.CleanKey(offered)
		return nil
	}
	return m.pki.SaveMasterPub(offered)
}
