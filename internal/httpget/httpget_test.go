package httpget

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadResponse(t *testing.T) {
	tests := []struct {
		name, in string
		want     *Response
		loc      string
		err      error
	}{
		{name: "content-length", in: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhelloEXTRA",
			want: &Response{StatusCode: 200, Status: "OK", Body: []byte("hello")}},
		{name: "chunked with extension and trailer", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\n6\r\n world\r\n0\r\nX-Sum: 1\r\n\r\n",
			want: &Response{StatusCode: 200, Status: "OK", Body: []byte("hello world")}},
		{name: "until close", in: "HTTP/1.0 200 Fine\r\n\r\nall of it",
			want: &Response{StatusCode: 200, Status: "Fine", Body: []byte("all of it")}},
		{name: "100 continue first", in: "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 404 Not Found\r\nContent-Length: 2\r\n\r\nno",
			want: &Response{StatusCode: 404, Status: "Not Found", Body: []byte("no")}},
		{name: "no content", in: "HTTP/1.1 204 No Content\r\n\r\n", want: &Response{StatusCode: 204, Status: "No Content"}},
		{name: "redirect", in: "HTTP/1.1 302 Found\r\nLocation: /next\r\nContent-Length: 0\r\n\r\n", loc: "/next"},
		{name: "redirect without location is a response", in: "HTTP/1.1 301 Moved\r\nContent-Length: 1\r\n\r\nx",
			want: &Response{StatusCode: 301, Status: "Moved", Body: []byte("x")}},
		{name: "short body", in: "HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabc", err: ErrMalformed},
		{name: "short chunk", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n9\r\nabc", err: ErrMalformed},
		{name: "bad chunk size", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", err: ErrMalformed},
		{name: "missing chunk CRLF", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n0\r\n\r\n", err: ErrMalformed},
		{name: "unknown transfer coding", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", err: ErrMalformed},
		{name: "conflicting lengths", in: "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", err: ErrMalformed},
		{name: "negative length", in: "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", err: ErrMalformed},
		{name: "not http", in: "SSH-2.0-OpenSSH_9.2\r\n", err: ErrMalformed},
		{name: "bad status", in: "HTTP/1.1 2000 OK\r\n\r\n", err: ErrMalformed},
		{name: "empty", in: "", err: io.ErrUnexpectedEOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, loc, err := ReadResponse(bufio.NewReader(strings.NewReader(tt.in)))
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("err = %v, want %v", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if loc != tt.loc {
				t.Errorf("location %q, want %q", loc, tt.loc)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
		})
	}
}

// FuzzReadResponse: any server answer gives a response, a redirect or an
// error, never a panic, and a body never longer than the input.
func FuzzReadResponse(f *testing.F) {
	for _, s := range []string{
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
		"HTTP/1.1 302 Found\r\nLocation: /x\r\n\r\n",
		"HTTP/1.0 200 OK\r\n\r\nbody",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		resp, loc, err := ReadResponse(bufio.NewReader(strings.NewReader(string(in))))
		if err != nil {
			return
		}
		if resp == nil && loc == "" {
			t.Fatal("no response, no redirect, no error")
		}
		if resp != nil && len(resp.Body) > len(in) {
			t.Fatalf("body of %d bytes from %d bytes of input", len(resp.Body), len(in))
		}
	})
}

func noProxy(*url.URL) *url.URL { return nil }

// TestGetFromRealServers fetches over real sockets from net/http servers:
// plain, TLS, redirects (relative and across schemes), chunked bodies and
// errors.
func TestGetFromRealServers(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/file", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Connection") != "close" || r.Method != http.MethodGet {
			http.Error(w, "unexpected request", http.StatusBadRequest)
			return
		}
		io.WriteString(w, "payload "+r.URL.RequestURI())
	})
	mux.HandleFunc("/chunked", func(w http.ResponseWriter, r *http.Request) {
		for _, part := range []string{"one ", "two ", "three"} {
			io.WriteString(w, part)
			w.(http.Flusher).Flush()
		}
	})
	mux.HandleFunc("/auth", func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		io.WriteString(w, u+":"+p+":"+map[bool]string{true: "yes", false: "no"}[ok])
	})
	mux.Handle("/hop", http.RedirectHandler("/file?from=hop", http.StatusFound))
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop", http.StatusTemporaryRedirect)
	})
	plain := httptest.NewServer(mux)
	defer plain.Close()
	secure := httptest.NewTLSServer(mux)
	defer secure.Close()
	mux.Handle("/to-plain", http.RedirectHandler(plain.URL+"/file?from=tls", http.StatusMovedPermanently))

	c := &Client{TLS: secure.Client().Transport.(*http.Transport).TLSClientConfig, Proxy: noProxy}
	ctx := context.Background()
	tests := []struct {
		url, body string
		code      int
	}{
		{plain.URL + "/file?a=1", "payload /file?a=1", 200},
		{secure.URL + "/file", "payload /file", 200},
		{plain.URL + "/chunked", "one two three", 200},
		{plain.URL + "/hop", "payload /file?from=hop", 200},
		{secure.URL + "/to-plain", "payload /file?from=tls", 200},
		{plain.URL + "/missing", "404 page not found\n", 404},
		{strings.Replace(plain.URL, "http://", "http://me:s3cret@", 1) + "/auth", "me:s3cret:yes", 200},
	}
	for _, tt := range tests {
		got, err := c.Get(ctx, tt.url)
		if err != nil {
			t.Errorf("%s: %v", tt.url, err)
			continue
		}
		if got.StatusCode != tt.code || string(got.Body) != tt.body {
			t.Errorf("%s: %d %q, want %d %q", tt.url, got.StatusCode, got.Body, tt.code, tt.body)
		}
	}
	if _, err := c.Get(ctx, plain.URL+"/loop"); err == nil || !strings.Contains(err.Error(), "redirects") {
		t.Errorf("redirect loop: %v", err)
	}
	// The TLS server's certificate is not trusted by default.
	if _, err := (&Client{Proxy: noProxy}).Get(ctx, secure.URL+"/file"); err == nil {
		t.Error("untrusted certificate accepted")
	}
	if _, err := c.Get(ctx, "ftp://example.com/x"); err == nil {
		t.Error("ftp accepted")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := c.Get(cctx, plain.URL+"/file"); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestGetThroughProxy: an http URL goes to the proxy in absolute form, an
// https URL through a CONNECT tunnel, each with the proxy's credentials.
func TestGetThroughProxy(t *testing.T) {
	origin := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "origin "+r.URL.Path)
	}))
	defer origin.Close()
	var seen []string
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Method+" "+r.RequestURI+" "+r.Header.Get("Proxy-Authorization"))
		if r.Method != http.MethodConnect {
			io.WriteString(w, "proxied "+r.URL.String())
			return
		}
		up, err := net.Dial("tcp", r.Host)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		w.WriteHeader(http.StatusOK)
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			up.Close()
			return
		}
		go func() { io.Copy(up, conn); up.Close() }()
		io.Copy(conn, up)
		conn.Close()
	}))
	defer proxy.Close()
	pu, _ := url.Parse(strings.Replace(proxy.URL, "http://", "http://p:w@", 1))
	c := &Client{TLS: origin.Client().Transport.(*http.Transport).TLSClientConfig, Proxy: func(*url.URL) *url.URL { return pu }}
	got, err := c.Get(context.Background(), "http://files.example/a")
	if err != nil || string(got.Body) != "proxied http://files.example/a" {
		t.Errorf("http via proxy: %v %v", got, err)
	}
	got, err = c.Get(context.Background(), origin.URL+"/b")
	if err != nil || string(got.Body) != "origin /b" {
		t.Errorf("https via proxy: %v %v", got, err)
	}
	want := []string{"GET http://files.example/a Basic cDp3", "CONNECT " + strings.TrimPrefix(origin.URL, "https://") + " Basic cDp3"}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Errorf("proxy saw (-want +got):\n%s", diff)
	}
}

func TestUseProxy(t *testing.T) {
	tests := []struct {
		url, noProxy string
		want         bool
	}{
		{"http://example.com/", "", true},
		{"http://localhost:8080/", "", false},
		{"http://127.0.0.1/", "", false},
		{"http://[::1]/", "", false},
		{"http://example.com/", "*", false},
		{"http://example.com/", "other.org, example.com", false},
		{"http://a.example.com/", "example.com", false},
		{"http://example.com/", ".example.com", true},
		{"http://a.example.com/", ".example.com", false},
		{"http://a.example.com/", "*.example.com", false},
		{"http://notexample.com/", "example.com", true},
		{"http://10.1.2.3/", "10.0.0.0/8", false},
		{"http://11.1.2.3/", "10.0.0.0/8", true},
		{"http://192.0.2.1:8080/", "192.0.2.1:8080", false},
		{"http://192.0.2.1:9090/", "192.0.2.1:8080", true},
		{"http://Example.COM/", "example.com", false},
	}
	for _, tt := range tests {
		u, _ := url.Parse(tt.url)
		if got := useProxy(u, tt.noProxy); got != tt.want {
			t.Errorf("useProxy(%s, %q) = %v, want %v", tt.url, tt.noProxy, got, tt.want)
		}
	}
}

func TestFromEnvironment(t *testing.T) {
	t.Setenv("HTTP_PROXY", "proxy.local:3128")
	t.Setenv("https_proxy", "http://secure.local:3129")
	t.Setenv("NO_PROXY", "internal.example")
	t.Setenv("REQUEST_METHOD", "")
	for in, want := range map[string]string{
		"http://example.com/":      "http://proxy.local:3128",
		"https://example.com/":     "http://secure.local:3129",
		"http://internal.example/": "",
		"http://localhost/":        "",
	} {
		u, _ := url.Parse(in)
		got := ""
		if p := FromEnvironment(u); p != nil {
			got = p.String()
		}
		if got != want {
			t.Errorf("FromEnvironment(%s) = %q, want %q", in, got, want)
		}
	}
	t.Setenv("REQUEST_METHOD", "GET") // CGI: HTTP_PROXY may come from the request
	if p := FromEnvironment(&url.URL{Scheme: "http", Host: "example.com"}); p != nil {
		t.Errorf("HTTP_PROXY used under CGI: %v", p)
	}
}
