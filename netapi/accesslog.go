package netapi

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// recorder remembers a response's status and size for the access log
// and /stats, passing Flush and Hijack through (streams need them).
type recorder struct {
	http.ResponseWriter
	status  int
	written int64
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(b)
	r.written += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// Flush sends what is buffered.
func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Hijack hands the connection over (websockets).
func (r *recorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	h, ok := r.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, fmt.Errorf("hijack: not supported")
	}
	if r.status == 0 {
		r.status = http.StatusSwitchingProtocols
	}
	return h.Hijack()
}

// countingBody counts what a handler reads of the request body.
type countingBody struct {
	io.ReadCloser
	n int64
}

func (c *countingBody) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	c.n += int64(n)
	return n, err
}

// accessLogger writes the Apache combined log format CherryPy's access
// log uses ('%h - %u [%t] "%r" %s %b "%{Referer}i" "%{User-Agent}i"').
type accessLogger struct {
	mu sync.Mutex
	w  io.Writer
}

func (a *accessLogger) log(r *http.Request, status int, size int64, now time.Time) {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	b := "-"
	if size > 0 {
		b = fmt.Sprint(size)
	}
	line := fmt.Sprintf("%s - - [%s] \"%s %s %s\" %d %s \"%s\" \"%s\"\n", host, now.Format("02/Jan/2006:15:04:05 -0700"),
		r.Method, redactedURI(r.URL), r.Proto, status, b, orDash(r.Referer()), orDash(r.UserAgent()))
	a.mu.Lock()
	defer a.mu.Unlock()
	_, _ = io.WriteString(a.w, line)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return strings.ReplaceAll(s, `"`, `\"`)
}

// secretParams are query parameters whose values never reach the log.
var secretParams = map[string]bool{"token": true, "salt_token": true, "password": true, "passwd": true}

// redactedURI is the request URI as logged: the values of token,
// salt_token and password parameters, and the token of /ws/<token>,
// replaced by "***".
func redactedURI(u *url.URL) string {
	path := u.EscapedPath()
	if i := strings.Index(path, "/ws/"); i >= 0 {
		path = path[:i] + "/ws/***"
	}
	if u.RawQuery == "" {
		return path
	}
	parts := strings.Split(u.RawQuery, "&")
	for i, p := range parts {
		k, _, ok := strings.Cut(p, "=")
		name, err := url.QueryUnescape(k)
		if err != nil {
			name = k
		}
		if ok && secretParams[strings.ToLower(name)] {
			parts[i] = k + "=***"
		}
	}
	return path + "?" + strings.Join(parts, "&")
}
