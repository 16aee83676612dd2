package netapi

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/ordered"
)

// handlerFunc is one endpoint method: it returns the response data
// (rendered as the client asked) or an error.
type handlerFunc func(c *call) (any, error)

// method is an endpoint's handler for one HTTP method with the CherryPy
// tools that apply to it.
type method struct {
	h handlerFunc
	// sessions is tools.sessions.on: the session cookie is read and
	// (re)sent.
	sessions bool
	// auth is tools.salt_auth.on: a logged-in session is required.
	auth bool
	// params are the query parameters the handler takes; nil takes any
	// (CherryPy passes query parameters as keyword arguments, and a
	// handler without them answers 404).
	params []string
	// stream methods write their own response (no negotiation, body or
	// slot).
	stream bool
}

// endpoint is one URL of the API: its methods and how many path
// segments may follow it (-1: any).
type endpoint struct {
	methods map[string]*method
	maxArgs int
}

// call is one request being handled.
type call struct {
	s     *Server
	w     http.ResponseWriter
	r     *http.Request
	ctx   context.Context
	args  []string
	media string
	// sid is the session id the request carried (X-Auth-Token beats the
	// cookie); sess its live session, if any.
	sid  string
	sess *session
	body Body
	// status is the success status (200 unless the handler says).
	status int
	// expireCookie sends an expired session cookie (/logout).
	expireCookie bool
}

// token is the logged-in session's eauth token ("" without one).
func (c *call) token() string {
	if c.sess == nil {
		return ""
	}
	return c.sess.token
}

// serveEndpoint runs an endpoint's method with the tools Salt applies:
// the session lookup, salt_auth, hypermedia_in (the body), the handler,
// then hypermedia_out (the response in the negotiated type).
func (s *Server) serveEndpoint(w http.ResponseWriter, r *http.Request, ep *endpoint, args []string) {
	name := r.Method
	if name == http.MethodHead {
		name = http.MethodGet
	}
	m, ok := ep.methods[name]
	if !ok {
		allowed := allowedMethods(ep)
		w.Header().Set("Allow", strings.Join(allowed, ", "))
		s.writeError(&call{s: s, w: w, r: r}, httpError(405, ""))
		return
	}
	c := &call{s: s, w: w, r: r, ctx: r.Context(), args: args, status: http.StatusOK}
	if m.sessions {
		c.sid = requestSession(r)
		c.sess, _ = s.sessions.lookup(c.sid, time.Now())
	}
	if m.stream {
		s.runStream(c, m)
		return
	}
	if !s.limit.acquire(r.Context()) {
		s.writeError(c, httpError(503, ""))
		return
	}
	defer s.limit.release()
	ret, err := s.runMethod(c, m)
	if m.sessions {
		s.sendCookie(c)
	}
	if err != nil {
		s.writeError(c, err)
		return
	}
	if ret == nil && c.status == 0 {
		return // the handler wrote the response
	}
	s.writeData(c, ret)
}

// runMethod checks and reads what the handler needs, then runs it.
func (s *Server) runMethod(c *call, m *method) (any, error) {
	media, mediaErr := accept(c.r.Header.Get("Accept"), len(c.r.Header.Values("Accept")) > 0, outMedia)
	c.media = media
	if m.auth && c.sess == nil {
		return nil, httpError(401, "")
	}
	if m.auth {
		c.w.Header().Set("Cache-Control", "private")
	}
	if err := checkParams(c.r, m.params); err != nil {
		return nil, err
	}
	if c.r.Method == http.MethodPost {
		if err := s.readBody(c); err != nil {
			return nil, err
		}
	}
	if mediaErr != nil {
		return nil, mediaErr
	}
	ctx := c.ctx
	if s.cfg.ExpireResponses {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, ResponseTimeout)
		defer cancel()
	}
	c.ctx = ctx
	return m.h(c)
}

// requestSession is salt_token_tool: the X-Auth-Token header trumps the
// session_id cookie.
func requestSession(r *http.Request) string {
	if h := r.Header.Get("X-Auth-Token"); h != "" {
		return h
	}
	if ck, err := r.Cookie("session_id"); err == nil {
		return ck.Value
	}
	return ""
}

// readBody reads and parses a POST body, refusing one larger than
// max_request_body_size with 413 before it is read whole.
func (s *Server) readBody(c *call) error {
	limit := s.cfg.MaxRequestBodySize
	if limit > 0 && c.r.ContentLength > limit {
		return httpError(413, "")
	}
	var rd io.Reader = c.r.Body
	if limit > 0 {
		rd = http.MaxBytesReader(c.w, c.r.Body, limit)
	}
	b, err := io.ReadAll(rd)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return httpError(413, "")
		}
		return httpError(400, "Could not read the request body")
	}
	body, err := ParseBody(c.r.Header.Get("Content-Type"), b)
	if err != nil {
		return err
	}
	c.body = body
	return nil
}

// checkParams answers 404 for query parameters a handler does not take,
// as CherryPy does.
func checkParams(r *http.Request, allowed []string) error {
	if allowed == nil {
		return nil
	}
	var extra []string
	for k := range r.URL.Query() {
		if !slices.Contains(allowed, k) {
			extra = append(extra, k)
		}
	}
	if len(extra) == 0 {
		return nil
	}
	slices.Sort(extra)
	return httpError(404, "Unexpected query string parameters: "+strings.Join(extra, ", "))
}

// sendCookie is the session tool's Set-Cookie: the live session's id,
// renewed for SessionTimeout, or a fresh id (not stored) for a request
// without one, as CherryPy hands every visitor a session; /logout sends
// one that has expired.
func (s *Server) sendCookie(c *call) {
	id := newSessionID()
	if c.sess != nil && s.sessions.alive(c.sess.id) {
		id = c.sess.id
	}
	ck := &http.Cookie{Name: "session_id", Value: id, Path: "/", HttpOnly: true, Secure: !s.cfg.DisableSSL,
		MaxAge: int(SessionTimeout / time.Second), Expires: time.Now().Add(SessionTimeout).UTC()}
	if c.expireCookie {
		ck.MaxAge, ck.Expires = -1, time.Now().Add(-365*24*time.Hour).UTC()
	}
	http.SetCookie(c.w, ck)
}

// writeData renders a successful response.
func (s *Server) writeData(c *call, v any) {
	b, err := render(c.media, v)
	if err != nil {
		s.log.Error("Could not serialize the return data from Salt.", logattr.Err, err)
		s.writeError(c, httpError(500, "Could not serialize the return data from Salt."))
		return
	}
	c.w.Header().Set("Content-Type", c.media)
	// With its length known the response goes out as one write (headers
	// and body) at writeBody's flush, not chunked with a second write
	// for the terminating chunk.
	c.w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	c.w.WriteHeader(c.status)
	if c.r.Method != http.MethodHead {
		writeBody(c.w, b)
	}
}

// responseWriteTimeout is how long a client may take to read a
// response before the connection is cut, so a client that does not read
// cannot hold a slot.
const responseWriteTimeout = time.Minute

// writeBody writes a response body within responseWriteTimeout, then
// clears the deadline: on a keep-alive HTTP/1.1 connection it would
// otherwise cut the next response, and over HTTP/2 reset the stream.
func writeBody(w http.ResponseWriter, b []byte) {
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Now().Add(responseWriteTimeout))
	_, _ = w.Write(b)
	_ = rc.Flush()
	_ = rc.SetWriteDeadline(time.Time{})
}

// writeError answers an error: Salt's status and message, as JSON or
// YAML {"status", "return"} when the client accepts one of them, else
// CherryPy's HTML page. An error that is not an HTTPError is Salt's
// 500 "An unexpected error occurred" (the error itself with debug).
func (s *Server) writeError(c *call, err error) {
	he, ok := asHTTPError(err)
	if !ok {
		s.log.Error("error while processing request", "path", c.r.URL.Path, logattr.Err, err)
		msg := "An unexpected error occurred"
		if s.cfg.Debug {
			msg = err.Error()
		}
		he = &HTTPError{Code: 500, Message: msg}
	} else if he.Code == 401 || he.Code == 400 {
		s.log.Error(he.Message, "path", c.r.URL.Path, "remote", remoteIP(c.r))
	}
	if he.Code >= 500 && ok {
		s.errLog.Printf("%s %s: %v", c.r.Method, c.r.URL.Path, err)
	}
	media, aerr := accept(c.r.Header.Get("Accept"), len(c.r.Header.Values("Accept")) > 0, outMedia)
	if he.Code == 406 || aerr != nil {
		c.w.Header().Set("Content-Type", "text/html;charset=utf-8")
		c.w.WriteHeader(he.Code)
		writeBody(c.w, errorPage(he))
		return
	}
	b, rerr := render(media, ordered.FromPairs("status", he.Code, "return", he.Message))
	if rerr != nil {
		b = errorPage(he)
		media = "text/html;charset=utf-8"
	}
	c.w.Header().Set("Content-Type", media)
	c.w.WriteHeader(he.Code)
	if c.r.Method != http.MethodHead {
		writeBody(c.w, b)
	}
}

func allowedMethods(ep *endpoint) []string {
	var out []string
	for m := range ep.methods {
		out = append(out, m)
		if m == http.MethodGet {
			out = append(out, http.MethodHead)
		}
	}
	slices.Sort(out)
	return out
}

// remoteIP is the client's address without the port.
func remoteIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
