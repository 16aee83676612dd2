package netapi

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"sync"
	"time"
)

// SessionTimeout is rest_cherrypy's tools.sessions.timeout, 10 hours,
// renewed by every request that uses the session (the cookie's
// Max-Age).
const SessionTimeout = 10 * time.Hour

// sessions is the session table: a session id, what /login hands out
// as "token", maps to the master's eauth token.
//
// It lives in salt-api's memory, as CherryPy's RamSession holds Salt's:
// a session is salt-api's notion (the master knows only eauth tokens,
// which it keeps in its token store), so keeping it here needs no new
// master request on every API call and a session dies with the process
// as Salt's do. The eauth token it maps to outlives a restart in the
// master's store, and is removed there by /logout.
type sessions struct {
	mu sync.Mutex
	m  map[string]*session
}

// session is one logged-in client.
type session struct {
	id     string
	token  string    // the eauth token
	expire time.Time // sliding: now + SessionTimeout at each use
}

func newSessions() *sessions { return &sessions{m: map[string]*session{}} }

// newSessionID is a CherryPy session id: 40 hex digits (160 random bits).
func newSessionID() string {
	b := make([]byte, 20)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on Linux
	return hex.EncodeToString(b)
}

// lookup finds a live session by id and renews it. The map is keyed by
// id, so the comparison that picks the entry is a hash lookup; the id
// is then compared in constant time as well.
func (s *sessions) lookup(id string, now time.Time) (*session, bool) {
	if id == "" {
		return nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ss, ok := s.m[id]
	if !ok || subtle.ConstantTimeCompare([]byte(ss.id), []byte(id)) != 1 {
		return nil, false
	}
	if !now.Before(ss.expire) {
		delete(s.m, id)
		return nil, false
	}
	ss.expire = now.Add(SessionTimeout)
	return ss, true
}

// login stores token under id (a live session keeps its id, as
// CherryPy's does), or under a new id.
func (s *sessions) login(id, token string, now time.Time) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ss, ok := s.m[id]; ok && id != "" && now.Before(ss.expire) {
		ss.token, ss.expire = token, now.Add(SessionTimeout)
		return ss
	}
	ss := &session{id: newSessionID(), token: token, expire: now.Add(SessionTimeout)}
	s.m[ss.id] = ss
	return ss
}

// logout removes a session.
func (s *sessions) logout(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, id)
}

// sweep removes expired sessions.
func (s *sessions) sweep(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, ss := range s.m {
		if !now.Before(ss.expire) {
			delete(s.m, id)
		}
	}
}

// alive reports whether a session still exists (a stream ends when its
// session is logged out).
func (s *sessions) alive(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.m[id]
	return ok
}
