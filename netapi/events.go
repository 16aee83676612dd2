package netapi

import (
	"context"
	"net/http"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/master"
)

// streamBuffer is how many events a stream may fall behind before it is
// dropped.
const streamBuffer = 256

// streamWriteTimeout is how long one event may take to reach a stream's
// client before the stream is ended.
const streamWriteTimeout = 10 * time.Second

// tokenRecheck is how often a stream checks its token with the master
// (Salt checks before every event; the expiry is also watched locally).
const tokenRecheck = 30 * time.Second

// runStream runs a stream endpoint: no slot, no body, its own response.
func (s *Server) runStream(c *call, m *method) {
	if err := checkParams(c.r, m.params); err != nil {
		s.writeError(c, err)
		return
	}
	if _, err := m.h(c); err != nil {
		s.sendCookie(c)
		s.writeError(c, err)
	}
}

// streamAuth is what a stream was authorized with: the eauth token,
// when it expires, and the session it came from ("" for a raw token).
type streamAuth struct {
	token   string
	expire  time.Time
	session string
}

// resolveToken is Events._is_valid_token: the value must be hex; a
// session id stands for its eauth token, anything else is taken as an
// eauth token; the master must know it and it must not have expired.
func (s *Server) resolveToken(ctx context.Context, v string, sessionsOnly bool) (streamAuth, bool) {
	if v == "" || !isPyHex(v) {
		return streamAuth{}, false
	}
	a := streamAuth{token: v}
	if ss, ok := s.sessions.lookup(v, time.Now()); ok {
		a.token, a.session = ss.token, ss.id
	} else if sessionsOnly {
		return streamAuth{}, false
	}
	exp, ok := s.tokenExpiry(ctx, a.token)
	if !ok {
		return streamAuth{}, false
	}
	a.expire = exp
	return a, true
}

// tokenExpiry asks the master for a token's expiry; false when it is
// unknown or expired.
func (s *Server) tokenExpiry(ctx context.Context, tok string) (time.Time, bool) {
	var td *ordered.Map
	err := s.pool.with(ctx, func(cl *master.Client) error {
		var e error
		td, e = cl.GetToken(ctx, tok)
		return e
	})
	if err != nil {
		return time.Time{}, false
	}
	f, _ := ordered.Number(td.Value("expire"))
	exp := time.Unix(0, int64(f*1e9))
	return exp, time.Now().Before(exp)
}

// events is Events.GET: the master's event bus as Server-Sent Events,
// framed exactly as Salt frames them: "retry: 400\n" (no blank line
// after it), then "tag: <tag>\ndata: <json>\n\n" per event, each flushed.
// The token comes from ?token= (a session id), ?salt_token= (an eauth
// token), X-Auth-Token or the session_id cookie (all a browser's
// EventSource can send). The stream ends when the token expires, the
// session is logged out, the client stops reading or the server stops.
func (s *Server) events(c *call) (any, error) {
	q := c.r.URL.Query()
	v := q.Get("token")
	if v == "" {
		v = q.Get("salt_token")
	}
	if v == "" {
		v = c.sid
	}
	auth, ok := s.resolveToken(c.ctx, v, false)
	if !ok {
		return nil, httpError(401, "")
	}
	sub := s.hub.subscribe(streamBuffer, false)
	defer s.hub.unsubscribe(sub)
	h := c.w.Header()
	h.Set("Content-Type", "text/event-stream;charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	s.sendCookie(c)
	c.w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(c.w)
	if !s.sseWrite(rc, c.w, []byte("retry: 400\n")) {
		return nil, nil
	}
	s.streamEvents(c.ctx, auth, sub, func(ev *hubEvent) bool {
		frame := make([]byte, 0, len(ev.Tag)+len(ev.JSON())+16)
		frame = append(append(append(frame, "tag: "...), ev.Tag...), '\n')
		frame = append(append(append(frame, "data: "...), ev.JSON()...), "\n\n"...)
		return s.sseWrite(rc, c.w, frame)
	})
	return nil, nil
}

// sseWrite writes and flushes one frame within streamWriteTimeout, then
// clears the deadline: over HTTP/2 a write deadline resets the stream
// when it passes even if nothing is being written, so a deadline left
// set would cut every stream that is quiet for streamWriteTimeout.
func (s *Server) sseWrite(rc *http.ResponseController, w http.ResponseWriter, b []byte) bool {
	_ = rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
	if _, err := w.Write(b); err != nil {
		return false
	}
	if rc.Flush() != nil {
		return false
	}
	_ = rc.SetWriteDeadline(time.Time{})
	return true
}

// streamEvents hands a stream's events to send until the stream must
// end: the client is gone (send fails or ctx ends), the hub dropped it,
// its token expired or was revoked, or its session was logged out.
func (s *Server) streamEvents(ctx context.Context, auth streamAuth, sub *subscriber, send func(*hubEvent) bool) {
	expire := time.NewTimer(time.Until(auth.expire))
	defer expire.Stop()
	recheck := time.NewTicker(tokenRecheck)
	defer recheck.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-expire.C:
			return
		case <-recheck.C:
			if _, ok := s.tokenExpiry(ctx, auth.token); !ok {
				return
			}
		case ev, ok := <-sub.ch:
			if !ok {
				return
			}
			if auth.session != "" && !s.sessions.alive(auth.session) {
				return
			}
			if !send(ev) {
				return
			}
		}
	}
}
