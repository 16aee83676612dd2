package netapi

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
)

// testServer is a Server whose master is not running: what answers
// without one can be checked in process.
func testServer(t *testing.T, mod func(*Config)) http.Handler {
	t.Helper()
	c := DefaultConfig()
	c.Port, c.DisableSSL = 8000, true
	c.EnableClients = Clients
	if mod != nil {
		mod(&c)
	}
	s, err := New(Options{Config: c, Socket: filepath.Join(t.TempDir(), "no.sock")})
	if err != nil {
		t.Fatal(err)
	}
	return s.Handler()
}

func do(h http.Handler, method, path, body string, hdr ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestHandlerWithoutMaster(t *testing.T) {
	h := testServer(t, nil)
	for _, tc := range []struct {
		method, path, body string
		hdr                []string
		code               int
		want               string
	}{
		{"GET", "/", "", nil, 200, `"return": "Welcome"`},
		{"GET", "/?x=1", "", nil, 404, "Unexpected query string parameters: x"},
		{"POST", "/login", `{"username": "u", "password": "p", "eauth": "auto"}`, []string{"Content-Type", "application/json"},
			503, `{"status": 503, "return": "Salt Master is not available."}`},
		{"POST", "/run", `[{"client": "local", "tgt": "*", "fun": "test.ping", "eauth": "auto"}]`,
			[]string{"Content-Type", "application/json"}, 503, "Salt Master is not available."},
		{"POST", "/run", `[{"client": "local", "tgt": "*", "fun": "test.ping", "token": "xyz"}]`,
			[]string{"Content-Type", "application/json"}, 401, "Invalid token"},
		{"GET", "/logout", "", nil, 405, "Specified method is invalid for this resource"},
		{"GET", "/minions/a/b", "", nil, 404, "The path '/minions/a/b' was not found."},
		{"POST", "/", "", nil, 401, "No permission -- see authorization schemes"},
		{"GET", "/", "", []string{"Accept", "application/x-yaml"}, 200, "return: Welcome\n"},
		{"GET", "/events", "", nil, 401, "No permission"},
	} {
		w := do(h, tc.method, tc.path, tc.body, tc.hdr...)
		if w.Code != tc.code || !strings.Contains(w.Body.String(), tc.want) {
			t.Errorf("%s %s: %d %s, want %d with %q", tc.method, tc.path, w.Code, w.Body.String(), tc.code, tc.want)
		}
		if w.Header().Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("%s %s: no CORS header", tc.method, tc.path)
		}
	}
	w := do(h, "POST", "/", "")
	if ck := w.Result().Cookies(); len(ck) != 1 || !hex40(ck[0].Value) {
		t.Errorf("a 401 hands out a fresh session id: %v", w.Header().Values("Set-Cookie"))
	}
}

func hex40(s string) bool { return len(s) == 40 && isPyHex(s) }

func TestHandlerOptions(t *testing.T) {
	h := testServer(t, func(c *Config) {
		c.EnableSessions = false
		c.MaxRequestBodySize = 10
		c.ThreadPool = 1
		c.RootPrefix = "/api"
	})
	if w := do(h, "GET", "/api/login", ""); w.Code != 404 {
		t.Errorf("without enable_sessions /login is gone: %d", w.Code)
	}
	if w := do(h, "GET", "/api/", ""); w.Code != 200 {
		t.Errorf("root_prefix: %d %s", w.Code, w.Body.String())
	}
	if w := do(h, "POST", "/api/run", strings.Repeat("x", 100), "Content-Type", "text/plain"); w.Code != 413 {
		t.Errorf("max_request_body_size: %d", w.Code)
	}
	w := do(h, "OPTIONS", "/api/run", "", "Origin", "https://ui", "Access-Control-Request-Method", "POST")
	if w.Code != 200 || w.Header().Get("Access-Control-Allow-Origin") != "https://ui" || w.Header().Get("Access-Control-Max-Age") != "1400" {
		t.Errorf("preflight %d %v", w.Code, w.Header())
	}
}
