package minion

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/brinesalt/brine/internal/crypt"
	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/protocol"
	"github.com/brinesalt/brine/state/ordered"
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
	for {
		st, err := m.signIn(ctx)
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
// keys opened.
func (m *Minion) signIn(ctx context.Context) (*authState, error) {
	token := []byte(crypt.GenerateKeyString())
	nonce := newNonce()
	a := &protocol.AuthRequest{ID: m.id, Nonce: nonce, EncAlgo: crypt.OAEPSHA1, SigAlgo: crypt.PKCS1v15SHA1, Pub: m.pub}
	cached, haveCached := m.cachedMaster()
	if haveCached {
		if mk, err := crypt.ParsePublicKey([]byte(cached)); err == nil {
			if a.Token, err = crypt.Encrypt(mk, token, a.EncAlgo); err != nil {
				return nil, fmt.Errorf("sign in: %w", err)
			}
		}
	}
	frame, err := protocol.Marshal(&protocol.Request{Enc: protocol.EncClear, Load: a, Version: protocol.RequestVersion})
	if err != nil {
		return nil, fmt.Errorf("sign in: %w", err)
	}
	rctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	raw, err := m.req.Do(rctx, frame)
	if err != nil {
		return nil, fmt.Errorf("sign in: %w", err)
	}
	v, err := protocol.Unmarshal(raw)
	if err != nil {
		return nil, fmt.Errorf("sign in: %w", err)
	}
	sc, plain, err := protocol.DecodeSignedClear(v)
	if err != nil {
		return nil, fmt.Errorf("sign in: %v: %w", v, err)
	}
	load := plain
	if sc != nil {
		body, err := protocol.Unmarshal(sc.Load)
		if err != nil {
			return nil, fmt.Errorf("sign in: %w", err)
		}
		load, _ = body.(*ordered.Map)
		if load == nil {
			return nil, fmt.Errorf("sign in: reply load is not a map: %w", protocol.ErrBadLoad)
		}
		// The signature is checked with the pinned key when there is
		// one, else with the key the reply offers (then pinned below).
		verifyWith := cached
		if !haveCached {
			verifyWith, _ = load.Value("pub_key").(string)
		}
		if verifyWith != "" {
			mk, err := crypt.ParsePublicKey([]byte(verifyWith))
			if err != nil {
				return nil, fmt.Errorf("sign in: %w", err)
			}
			if err := crypt.Verify(mk, sc.Load, sc.Sig, a.SigAlgo); err != nil {
				if offered, _ := load.Value("pub_key").(string); haveCached && offered != "" && crypt.CleanKey(offered) != cached {
					return nil, fmt.Errorf("sign in: %w", ErrMasterKeyChanged)
				}
				return nil, fmt.Errorf("sign in: reply signature: %w", err)
			}
		}
	}
	if n, ok := load.Value("nonce").(string); ok && n != nonce {
		return nil, fmt.Errorf("sign in: %w", crypt.ErrNonce)
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
	reply, err := protocol.ParseAuthReply(load)
	if err != nil {
		return nil, fmt.Errorf("sign in: %w", err)
	}
	if err := m.checkMaster(reply.PubKey, a.Token != nil); err != nil {
		return nil, err
	}
	mk, err := crypt.ParsePublicKey([]byte(reply.PubKey))
	if err != nil {
		return nil, fmt.Errorf("sign in: %w", err)
	}
	var tok []byte
	if a.Token != nil {
		tok = token
	}
	keys, err := crypt.OpenAuthReply(m.key, mk, reply, tok, a.EncAlgo)
	if err != nil {
		return nil, fmt.Errorf("sign in: %w", err)
	}
	aes, err := crypt.NewCrypticle(keys.AES)
	if err != nil {
		return nil, fmt.Errorf("sign in: %w", err)
	}
	sess, err := crypt.NewCrypticle(keys.Session)
	if err != nil {
		return nil, fmt.Errorf("sign in: %w", err)
	}
	return &authState{aes: aes, session: sess, masterKey: mk, pubPort: reply.PublishPort}, nil
}

// checkMaster is AsyncAuth.verify_master: the offered key must equal the
// pinned one; the first key met is pinned, after master_finger, when
// set, matched its fingerprint.
func (m *Minion) checkMaster(offered string, sentToken bool) error {
	cached, ok := m.cachedMaster()
	if ok {
		if crypt.CleanKey(offered) != cached && !m.c.OpenMode {
			return fmt.Errorf("sign in: %w", ErrMasterKeyChanged)
		}
		return nil
	}
	if m.c.MasterFinger != "" {
		f, err := crypt.Finger(crypt.PemBody([]byte(offered)), crypt.DefaultHashType)
		if err != nil || f != m.c.MasterFinger {
			return fmt.Errorf("sign in: the master's fingerprint %s is not master_finger %s: %w", f, m.c.MasterFinger, ErrMasterKeyChanged)
		}
	}
	if m.o.NoDisk {
		m.pinnedPub = crypt.CleanKey(offered)
		return nil
	}
	if _, err := m.pki.CheckMasterKey(offered, sentToken, m.c.OpenMode); err != nil {
		return fmt.Errorf("sign in: %w", err)
	}
	return nil
}

// nextMaster moves to the next address of a master list after a failed
// sign-in, as master_type failover does; a single master stays put.
func (m *Minion) nextMaster() {
	if len(m.c.Masters) < 2 {
		return
	}
	m.masterIdx = (m.masterIdx + 1) % len(m.c.Masters)
	m.req.SetAddr(m.masterAddr(m.c.MasterPort))
	m.log.Info("trying the next master", "master", m.req.Address())
}
