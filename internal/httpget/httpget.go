// Package httpget fetches a URL with one HTTP/1.1 GET, over TLS for
// https, following redirects and the usual proxy variables. It exists so
// that the thin binary, which every cold host must download, unpack and
// hash, need not link net/http (about 3 MB of the binary's 12.5 MB) for
// the one thing it fetches: cp.get_url and friends (Salt's
// salt/fileclient.py get_url over salt/utils/http.py).
//
// It speaks the subset of HTTP/1.1 a download needs: a GET with
// "Connection: close", a body framed by Content-Length, chunked transfer
// coding or the end of the connection, and redirects (301, 302, 303, 307,
// 308, at most 10, as net/http's default client). No compression is asked
// for, so none has to be undone.
package httpget

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"time"
)

// maxRedirects is net/http's default client limit.
const maxRedirects = 10

// Response is a fetched resource: the final status and the body.
type Response struct {
	StatusCode int
	Status     string // reason phrase, e.g. "Not Found"
	Body       []byte
}

// Client fetches URLs. The zero value is ready to use: system roots for
// TLS and proxies from the environment.
type Client struct {
	// TLS is the TLS configuration for https; nil means the defaults.
	TLS *tls.Config
	// Proxy returns the proxy URL for a request URL, or nil for none; nil
	// means FromEnvironment.
	Proxy func(*url.URL) *url.URL
	// UserAgent is sent as User-Agent when set.
	UserAgent string
}

// Get fetches rawURL, following redirects. A status of 400 or more is
// not an error: the caller decides what it means.
func (c *Client) Get(ctx context.Context, rawURL string) (*Response, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	for range maxRedirects + 1 {
		resp, loc, err := c.once(ctx, u)
		if err != nil {
			return nil, fmt.Errorf("get %s: %w", u.Redacted(), err)
		}
		if loc == "" {
			return resp, nil
		}
		next, err := u.Parse(loc)
		if err != nil {
			return nil, fmt.Errorf("get %s: bad redirect %q: %w", u.Redacted(), loc, err)
		}
		u = next
	}
	return nil, fmt.Errorf("get %s: stopped after %d redirects", u.Redacted(), maxRedirects)
}

// once does one request; loc is the redirect target, if any.
func (c *Client) once(ctx context.Context, u *url.URL) (*Response, string, error) {
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, "", fmt.Errorf("unsupported scheme %q", u.Scheme)
	}
	if u.Host == "" {
		return nil, "", errors.New("no host in URL")
	}
	conn, err := c.dial(ctx, u)
	if err != nil {
		return nil, "", err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	var viaProxy *url.URL
	if u.Scheme == "http" {
		viaProxy = c.proxyFor(u)
	}
	if err := writeRequest(conn, u, viaProxy, c.UserAgent); err != nil {
		return nil, "", ctxErr(ctx, err)
	}
	resp, loc, err := ReadResponse(bufio.NewReader(conn))
	if err != nil {
		return nil, "", ctxErr(ctx, err)
	}
	return resp, loc, nil
}

func ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return err
}

func (c *Client) proxyFor(u *url.URL) *url.URL {
	if c.Proxy != nil {
		return c.Proxy(u)
	}
	return FromEnvironment(u)
}

// dial connects to u's host, or to its proxy (through CONNECT for https),
// and starts TLS for https.
func (c *Client) dial(ctx context.Context, u *url.URL) (net.Conn, error) {
	var d net.Dialer
	proxy := c.proxyFor(u)
	addr := hostPort(u)
	if proxy != nil {
		if proxy.Scheme != "http" {
			return nil, fmt.Errorf("unsupported proxy scheme %q", proxy.Scheme)
		}
		addr = hostPort(proxy)
	}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if u.Scheme == "http" {
		return conn, nil
	}
	if proxy != nil {
		if err := connectTunnel(ctx, conn, hostPort(u), proxy); err != nil {
			conn.Close()
			return nil, err
		}
	}
	cfg := &tls.Config{}
	if c.TLS != nil {
		cfg = c.TLS.Clone()
	}
	if cfg.ServerName == "" {
		cfg.ServerName = u.Hostname()
	}
	tc := tls.Client(conn, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		conn.Close()
		return nil, err
	}
	return tc, nil
}

// connectTunnel asks an HTTP proxy for a tunnel to addr.
func connectTunnel(ctx context.Context, conn net.Conn, addr string, proxy *url.URL) error {
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	req := "CONNECT " + addr + " HTTP/1.1\r\nHost: " + addr + "\r\n" + proxyAuth(proxy) + "\r\n"
	if _, err := io.WriteString(conn, req); err != nil {
		return ctxErr(ctx, err)
	}
	// The proxy's answer has no body; read byte by byte so nothing of
	// the TLS stream that follows is consumed.
	br := bufio.NewReaderSize(oneByteReader{conn}, 16)
	code, reason, _, err := readHead(br)
	if err != nil {
		return ctxErr(ctx, fmt.Errorf("proxy CONNECT: %w", err))
	}
	if code != 200 {
		return fmt.Errorf("proxy CONNECT: %d %s", code, reason)
	}
	return nil
}

type oneByteReader struct{ r io.Reader }

func (o oneByteReader) Read(p []byte) (int, error) {
	if len(p) > 1 {
		p = p[:1]
	}
	return o.r.Read(p)
}

func proxyAuth(proxy *url.URL) string {
	if proxy.User == nil {
		return ""
	}
	return "Proxy-Authorization: Basic " + basicAuth(proxy.User) + "\r\n"
}

// hostPort is u's host with the scheme's default port when it has none.
func hostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// writeRequest sends the GET; through an HTTP proxy (http URLs only; https
// goes through a CONNECT tunnel) the request line carries the absolute URL.
func writeRequest(w io.Writer, u *url.URL, proxy *url.URL, agent string) error {
	target := u.RequestURI()
	if proxy != nil {
		cp := *u
		cp.User, cp.Fragment = nil, ""
		target = cp.String()
	}
	if strings.ContainsAny(target, " \r\n") || strings.ContainsAny(u.Host, " \r\n") {
		return fmt.Errorf("invalid request target %q", target)
	}
	var b strings.Builder
	b.WriteString("GET " + target + " HTTP/1.1\r\nHost: " + u.Host + "\r\n")
	if proxy != nil {
		b.WriteString(proxyAuth(proxy))
	}
	if u.User != nil {
		b.WriteString("Authorization: Basic " + basicAuth(u.User) + "\r\n")
	}
	if agent != "" {
		b.WriteString("User-Agent: " + strings.NewReplacer("\r", "", "\n", "").Replace(agent) + "\r\n")
	}
	b.WriteString("Accept: */*\r\nConnection: close\r\n\r\n")
	_, err := io.WriteString(w, b.String())
	return err
}
