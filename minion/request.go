package minion

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/brinesalt/brine/internal/crypt"
	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
	"github.com/brinesalt/brine/internal/transport"
)

// errRefused is the master answering "bad load": the session is not
// valid (the master lost or rotated it) and the minion signs in again.
var errRefused = errors.New("master refused the request")

// requestTimeout bounds one request on the request channel (Salt's
// default timeout for returns is 60 s).
const requestTimeout = 60 * time.Second

// request sends an encrypted load (AsyncReqChannel.send) and returns the
// decrypted reply. A refusal or a reply that does not decrypt triggers
// one re-authentication and a second try. private selects send_private
// replies (_pillar).
func (m *Minion) request(ctx context.Context, load *ordered.Map, private bool) (any, error) {
	return m.requestOn(ctx, m.req, load, private)
}

// requestOn is request on the given request socket.
func (m *Minion) requestOn(ctx context.Context, rq *transport.Req, load *ordered.Map, private bool) (any, error) {
	for attempt := 0; ; attempt++ {
		st := m.state()
		if st == nil {
			return nil, errors.New("request: not authenticated")
		}
		v, err := m.requestOnce(ctx, rq, st, load, private)
		if err == nil {
			return v, nil
		}
		if attempt > 0 || !(errors.Is(err, errRefused) || errors.Is(err, crypt.ErrAuthentication)) {
			return nil, err
		}
		m.log.Info("request refused, signing in again", logattr.Err, err)
		if _, err := m.authenticate(ctx, st.generation); err != nil {
			return nil, err
		}
	}
}

func (m *Minion) requestOnce(ctx context.Context, rq *transport.Req, st *authState, load *ordered.Map, private bool) (any, error) {
	nonce := newNonce()
	req, err := m.packageRequest(st.session, load, nonce)
	if err != nil {
		return nil, err
	}
	frame, err := protocol.Marshal(req)
	if err != nil {
		return nil, err
	}
	rctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	raw, err := rq.Do(rctx, frame)
	if err != nil {
		return nil, err
	}
	v, err := protocol.Unmarshal(raw)
	if err != nil {
		return nil, fmt.Errorf("request: %w", err)
	}
	if s, ok := v.(string); ok {
		return nil, fmt.Errorf("request: %s: %w", s, errRefused)
	}
	if private {
		mm, ok := v.(*ordered.Map)
		if !ok {
			return nil, fmt.Errorf("request: private reply is %T: %w", v, protocol.ErrBadLoad)
		}
		return crypt.OpenPrivate(m.key, st.masterKey, mm, "pillar", nonce, crypt.OAEPSHA1, crypt.PKCS1v15SHA1)
	}
	enc, ok := protocol.AsBytes(v)
	if !ok {
		return nil, fmt.Errorf("request: reply is %T: %w", v, protocol.ErrBadLoad)
	}
	return st.session.Loads(enc, nonce)
}

// packageRequest is crypt.PackageRequest with the request token computed
// once: "tok" is the X9.31 signature of b"salt", deterministic for a
// key, so signing it for every request only burns an RSA private-key
// operation per return.
func (m *Minion) packageRequest(session *crypt.Crypticle, load *ordered.Map, nonce string) (*protocol.Request, error) {
	m.tokOnce.Do(func() { m.tok, m.tokErr = crypt.RequestToken(m.key) })
	if m.tokErr != nil {
		return nil, fmt.Errorf("package request: %w", m.tokErr)
	}
	stamped := load.Copy()
	protocol.Stamp{Nonce: nonce, TS: time.Now().Unix(), Tok: m.tok, ID: m.id}.Apply(stamped)
	enc, err := session.Dumps(stamped, "")
	if err != nil {
		return nil, fmt.Errorf("package request: %w", err)
	}
	return &protocol.Request{Enc: protocol.EncAES, Load: enc, Version: protocol.RequestVersion,
		ID: m.id, EncAlgo: crypt.OAEPSHA1, SigAlgo: crypt.PKCS1v15SHA1}, nil
}
