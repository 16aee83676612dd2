package apiclients

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"html"
	"io"
	"net/http"
	"net/textproto"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
)

// curl runs curl against salt-api. Secrets (the session token, a
// password in a form) go through files (-H @file, -d @file), never its
// argument list.
type curl struct {
	e   *env
	bin string
	dir string
}

// reply is what curl received.
type reply struct {
	status int
	header http.Header
	body   []byte
}

func newCurl(t *testing.T, e *env) *curl {
	t.Helper()
	return &curl{e: e, bin: tool(t, "curl", "curl"), dir: t.TempDir()}
}

// secret writes data to a new 0600 file for curl to read and returns
// "@path".
func (c *curl) secret(t *testing.T, name, data string) string {
	t.Helper()
	f, err := os.CreateTemp(c.dir, name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(data); err != nil {
		t.Fatal(err)
	}
	return "@" + f.Name()
}

// auth is the -H @file argument carrying token.
func (c *curl) auth(t *testing.T, token string) []string {
	return []string{"-H", c.secret(t, "auth-header", "X-Auth-Token: "+token+"\n")}
}

// do runs curl -sk with args on path and returns the response.
func (c *curl) do(t *testing.T, path string, args ...string) reply {
	t.Helper()
	hdr := filepath.Join(c.dir, "headers")
	body := filepath.Join(c.dir, "body")
	argv := append([]string{"-sk", "--max-time", "60", "-D", hdr, "-o", body}, args...)
	cmd := exec.Command(c.bin, append(argv, c.e.url+path)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("curl %v %s: %v\n%s", args, path, err, out)
	}
	return readReply(t, hdr, body)
}

// readReply parses curl's -D header dump (the last response in it) and
// the body file.
func readReply(t *testing.T, hdrPath, bodyPath string) reply {
	t.Helper()
	h, err := os.ReadFile(hdrPath)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(bodyPath)
	blocks := strings.Split(strings.TrimSpace(strings.ReplaceAll(string(h), "\r\n", "\n")), "\n\n")
	last := blocks[len(blocks)-1]
	status, rest, _ := strings.Cut(last, "\n")
	f := strings.Fields(status)
	if len(f) < 2 {
		t.Fatalf("curl: no status line in %q", h)
	}
	code, _ := strconv.Atoi(f[1])
	mh, _ := textproto.NewReader(bufioReader(rest + "\n\n")).ReadMIMEHeader()
	return reply{status: code, header: http.Header(mh), body: b}
}

func TestE2ECurlFormBodies(t *testing.T) {
	e := need(t)
	c := newCurl(t, e)
	tok := c.auth(t, e.login(t, apiUser, "pam"))
	// A single form dict is one lowstate chunk; repeated arg is a list,
	// each value YAML-parsed, k=v in arg a keyword argument.
	r := c.do(t, "/", append(tok, "-H", "Accept: application/json", "-d", "client=local", "-d", "tgt=m1", "-d", "fun=test.arg_clean",
		"-d", "arg=a", "-d", "arg=2", "-d", "arg=k=v")...)
	want := `{"return": [{"m1": {"args": ["a", 2], "kwargs": {"k": "v"}}}]}`
	if r.status != 200 || string(r.body) != want || r.header.Get("Content-Type") != "application/json" {
		t.Errorf("form lowstate: %d %s %s, want 200 application/json %s", r.status, r.header.Get("Content-Type"), r.body, want)
	}
	// /login takes a form too.
	r = c.do(t, "/login", "-H", "Accept: application/json", "-d", c.secret(t, "login-form",
		"username="+apiUser+"&password="+e.passwd[apiUser]+"&eauth=pam"))
	if r.status != 200 || lookup(decodeOrdered(t, r.body), "return", 0, "user") != apiUser || r.header.Get("X-Auth-Token") == "" {
		t.Errorf("form /login: %d %v %s", r.status, r.header, r.body)
	}
}

func TestE2ECurlYAML(t *testing.T) {
	e := need(t)
	c := newCurl(t, e)
	tok := c.auth(t, e.login(t, apiUser, "pam"))
	r := c.do(t, "/", append(tok, "-H", "Content-Type: application/x-yaml", "-H", "Accept: application/x-yaml",
		"--data-binary", "- client: local\n  tgt: m2\n  fun: test.ping\n")...)
	if r.status != 200 || string(r.body) != "return:\n- m2: true\n" || r.header.Get("Content-Type") != "application/x-yaml" {
		t.Errorf("YAML in and out: %d %q %q, want 200 application/x-yaml %q", r.status, r.header.Get("Content-Type"), r.body, "return:\n- m2: true\n")
	}
	r = c.do(t, "/", append(tok, "-H", "Content-Type: text/yaml", "-H", "Accept: application/json",
		"--data-binary", "client: local\ntgt: m3\nfun: test.echo\narg: [hello]\n")...)
	if want := `{"return": [{"m3": "hello"}]}`; r.status != 200 || string(r.body) != want {
		t.Errorf("text/yaml single chunk: %d %s, want %s", r.status, r.body, want)
	}
	// text/plain is JSON (what a browser's fetch() sends).
	r = c.do(t, "/", append(tok, "-H", "Content-Type: text/plain;charset=UTF-8", "-H", "Accept: application/json",
		"--data-binary", `{"client": "local", "tgt": "m1", "fun": "test.ping"}`)...)
	if want := `{"return": [{"m1": true}]}`; r.status != 200 || string(r.body) != want {
		t.Errorf("text/plain JSON: %d %s, want %s", r.status, r.body, want)
	}
}

// statusCase is one request and the status and message Salt answers.
type statusCase struct {
	name   string
	path   string
	args   []string
	status int
	msg    string
}

func TestE2ECurlStatusCodes(t *testing.T) {
	e := need(t)
	c := newCurl(t, e)
	tok := c.auth(t, e.login(t, apiUser, "pam"))
	limited := newCurl(t, e).auth(t, e.login(t, limitedUser, "pam"))
	js := []string{"-H", "Accept: application/json", "-H", "Content-Type: application/json"}
	ping := `{"client": "local", "tgt": "m1", "fun": "test.ping"}`
	big := `[{"client": "local", "tgt": "m1", "fun": "test.echo", "arg": ["` + strings.Repeat("x", 70000) + `"]}]`
	cases := []statusCase{
		{"no token", "/", append(js, "-d", ping), 401, "No permission -- see authorization schemes"},
		{"garbage token", "/", append(c.auth(t, "not-a-token"), append(js, "-d", ping)...), 401, ""},
		{"unknown hex token", "/", append(c.auth(t, strings.Repeat("ab", 20)), append(js, "-d", ping)...), 401, ""},
		{"bad password", "/login", append(js, "-d", c.secret(t, "bad-login", `{"username": "apiuser", "password": "wrong", "eauth": "pam"}`)), 401,
			"Could not authenticate using provided credentials"},
		{"not permitted", "/", append(limited, append(js, "-d", `{"client": "local", "tgt": "m1", "fun": "cmd.run", "arg": ["id"]}`)...), 401,
			"Authorization error occurred."},
		{"not permitted runner", "/", append(limited, append(js, "-d", `{"client": "runner", "fun": "jobs.list_jobs"}`)...), 401,
			`Authentication failure of type "token" occurred for user limited.`},
		{"invalid JSON", "/", append(tok, append(js, "-d", `[{"client": "local",`)...), 400, "Invalid JSON document"},
		{"invalid YAML", "/", append(tok, "-H", "Accept: application/json", "-H", "Content-Type: application/x-yaml", "--data-binary", "- [unclosed\n"), 400,
			"Invalid YAML document"},
		{"not a list", "/", append(tok, append(js, "-d", `"test.ping"`)...), 400, "Lowstates must be a list"},
		{"unknown client", "/", append(tok, append(js, "-d", `{"client": "nosuch", "tgt": "m1", "fun": "test.ping"}`)...), 400,
			"Invalid client specified: 'nosuch'"},
		{"unsupported Accept", "/", append(tok, "-H", "Accept: text/csv", "-H", "Content-Type: application/json", "-d", ping), 406, ""},
		{"unsupported Content-Type", "/", append(tok, "-H", "Accept: application/json", "-H", "Content-Type: application/xml", "-d", "<x/>"), 406,
			"Content type not supported"},
		{"body over max_request_body_size", "/", append(tok, append(js, "--data-binary", big)...), 413, ""},
		{"PUT", "/", append(tok, append(js, "-X", "PUT", "-d", ping)...), 405, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := c.do(t, tc.path, tc.args...)
			if r.status != tc.status || !strings.Contains(message(r), tc.msg) {
				t.Errorf("%s: %d %s, want %d with %q", tc.name, r.status, r.body, tc.status, tc.msg)
			}
		})
	}
	// A target that matches nothing is Salt's empty return, not an error.
	r := c.do(t, "/", append(tok, append(js, "-d", `{"client": "local", "tgt": "nosuch*", "fun": "test.ping"}`)...)...)
	if want := `{"return": [{}]}`; r.status != 200 || string(r.body) != want {
		t.Errorf("no match: %d %s, want 200 %s", r.status, r.body, want)
	}
}

func TestE2ECurlCORS(t *testing.T) {
	e := need(t)
	c := newCurl(t, e)
	origin := "https://console.example"
	r := c.do(t, "/", "-X", "OPTIONS", "-H", "Origin: "+origin, "-H", "Access-Control-Request-Method: POST",
		"-H", "Access-Control-Request-Headers: X-Auth-Token, Content-Type")
	want := map[string]string{
		"Access-Control-Allow-Origin":      origin,
		"Access-Control-Allow-Methods":     "GET, POST",
		"Access-Control-Allow-Headers":     "Content-Type, X-Auth-Token, X-Requested-With",
		"Access-Control-Max-Age":           "1400",
		"Access-Control-Allow-Credentials": "true",
	}
	if r.status/100 != 2 {
		t.Errorf("preflight: status %d, want 2xx (Salt's own preflight fails with 500)", r.status)
	}
	for k, v := range want {
		if got := r.header.Get(k); got != v {
			t.Errorf("preflight %s = %q, want %q", k, got, v)
		}
	}
	r = c.do(t, "/", "-H", "Origin: "+origin, "-H", "Accept: application/json")
	if r.status != 200 || r.header.Get("Access-Control-Allow-Origin") != origin || r.header.Get("Access-Control-Expose-Headers") != "GET, POST" ||
		r.header.Get("Access-Control-Allow-Credentials") != "true" {
		t.Errorf("GET / with Origin: %d %v", r.status, r.header)
	}
}

// TestE2ECurlKeys: POST /keys (credentials in the form) is a tar of a new
// key pair whose public half the master has accepted already.
func TestE2ECurlKeys(t *testing.T) {
	e := need(t)
	c := newCurl(t, e)
	r := c.do(t, "/keys", "-d", c.secret(t, "keys-form", "mid=apinew&username="+apiUser+"&password="+e.passwd[apiUser]+"&eauth=pam"))
	t.Cleanup(func() { e.c.Run("salt-key", "-y", "-d", "apinew") })
	if r.status != 200 || r.header.Get("Content-Type") != "application/x-tar" ||
		r.header.Get("Content-Disposition") != `attachment; filename="saltkeys-apinew.tar"` {
		t.Fatalf("POST /keys: %d %v %.200q", r.status, r.header, r.body)
	}
	files := map[string][]byte{}
	tr := tar.NewReader(bytes.NewReader(r.body))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("saltkeys-apinew.tar: %v", err)
		}
		files[h.Name], _ = io.ReadAll(tr)
	}
	if len(files) != 2 || files["minion.pub"] == nil || files["minion.pem"] == nil {
		t.Fatalf("tar members: %v, want minion.pub and minion.pem", keysOf(files))
	}
	block, _ := pem.Decode(files["minion.pem"])
	if block == nil {
		t.Fatalf("minion.pem is not PEM: %.80q", files["minion.pem"])
	}
	if _, err := x509.ParsePKCS1PrivateKey(block.Bytes); err != nil {
		if _, err2 := x509.ParsePKCS8PrivateKey(block.Bytes); err2 != nil {
			t.Errorf("minion.pem: %v", err)
		}
	}
	accepted, err := os.ReadFile(filepath.Join(e.c.Dir, "master/pki/minions/apinew"))
	if err != nil || string(accepted) != string(files["minion.pub"]) {
		t.Errorf("the master's accepted apinew key differs from minion.pub (%v):\n%s\n%s", err, accepted, files["minion.pub"])
	}
	tok := c.auth(t, e.login(t, apiUser, "pam"))
	r = c.do(t, "/keys/apinew", append(tok, "-H", "Accept: application/json")...)
	if fp, _ := lookup(decodeOrdered(t, r.body), "return", "minions", "apinew").(string); r.status != 200 || strings.Count(fp, ":") < 31 {
		t.Errorf("GET /keys/apinew: %d %s, want a fingerprint", r.status, r.body)
	}
}

func keysOf(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestE2ECurlHookAndEvents: curl reads /events (Salt's framing, byte for
// byte) while it posts to /hook/<path>; the hook's event is on the bus.
func TestE2ECurlHookAndEvents(t *testing.T) {
	e := need(t)
	c := newCurl(t, e)
	token := e.login(t, apiUser, "pam")
	tok := c.auth(t, token)
	stream := filepath.Join(c.dir, "stream")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sse := exec.CommandContext(ctx, c.bin, append([]string{"-skN", "-o", stream}, append(tok, e.url+"/events")...)...)
	if err := sse.Start(); err != nil {
		t.Fatal(err)
	}
	defer sse.Wait()
	defer cancel()
	waitFile(t, stream, "retry: 400\n")

	r := c.do(t, "/hook/brine/ci", append(tok, "-H", "Content-Type: application/json", "-H", "Accept: application/json",
		"-d", `{"ref": "main", "n": 1}`)...)
	if r.status != 200 || string(r.body) != `{"success": true}` {
		t.Fatalf("POST /hook/brine/ci: %d %s", r.status, r.body)
	}
	waitFile(t, stream, "tag: salt/netapi/hook/brine/ci\n")
	data, _ := os.ReadFile(stream)
	if !bytes.HasPrefix(data, []byte("retry: 400\ntag: ")) {
		t.Errorf("/events does not start with %q: %.200q", "retry: 400\ntag: ", data)
	}
	ev := sseEvent(t, data, "salt/netapi/hook/brine/ci")
	post := pyDumps(t, lookup(ev, "data", "post"))
	if lookup(ev, "tag") != "salt/netapi/hook/brine/ci" || lookup(ev, "data", "body") != `{"ref": "main", "n": 1}` ||
		post != pyDumps(t, decodeOrdered(t, []byte(`{"ref": "main", "n": 1}`))) {
		t.Errorf("hook event:\n%s", pyDumps(t, ev))
	}
	if ct := lookup(ev, "data", "headers", "Content-Type"); ct != "application/json" {
		t.Errorf("hook event headers Content-Type = %v", ct)
	}
}

// message is an error answer's text: "return" of a JSON body (Brine
// answers JSON to a client that accepts it), else the <p> of CherryPy's
// HTML error page, which Salt always sends.
func message(r reply) string {
	if v, err := decodeOrderedErr(r.body); err == nil {
		s, _ := lookup(v, "return").(string)
		return s
	}
	_, p, _ := strings.Cut(string(r.body), "<p>")
	p, _, _ = strings.Cut(p, "</p>")
	return html.UnescapeString(p)
}

// waitFile waits until the file holds want.
func waitFile(t *testing.T, path, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if b, _ := os.ReadFile(path); bytes.Contains(b, []byte(want)) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	b, _ := os.ReadFile(path)
	t.Fatalf("%s never held %q: %.500q", path, want, b)
}

// sseEvent finds the event with tag in an SSE stream: "tag: <tag>\n"
// then "data: <json>\n\n", and decodes the data.
func sseEvent(t *testing.T, stream []byte, tag string) any {
	t.Helper()
	head := "tag: " + tag + "\ndata: "
	_, rest, ok := bytes.Cut(stream, []byte(head))
	if !ok {
		t.Fatalf("no %q in the stream", head)
	}
	line, _, ok := bytes.Cut(rest, []byte("\n\n"))
	if !ok {
		t.Fatalf("event %s is not ended by a blank line: %.300q", tag, rest)
	}
	return decodeOrdered(t, line)
}

func decodeOrdered(t *testing.T, b []byte) any {
	t.Helper()
	v, err := decodeOrderedErr(b)
	if err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	return v
}

func decodeOrderedErr(b []byte) (any, error) { return ordered.DecodeJSON(bytes.NewReader(b)) }

func bufioReader(s string) *bufio.Reader { return bufio.NewReader(strings.NewReader(s)) }

// quietStream is longer than salt-api's limit on writing one event to a
// stream (10 s): a stream must outlive a quiet spell longer than that.
const quietStream = 12 * time.Second

// TestE2ECurlEventsQuietHTTP2: an /events stream over HTTP/2 (what
// browsers and curl negotiate with salt-api's TLS) that has been quiet
// for a while still delivers the next event.
func TestE2ECurlEventsQuietHTTP2(t *testing.T) {
	e := need(t)
	c := newCurl(t, e)
	tok := c.auth(t, e.login(t, apiUser, "pam"))
	stream := filepath.Join(c.dir, "stream")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sse := exec.CommandContext(ctx, c.bin, append([]string{"--http2", "-skN", "-o", stream, "-H", "Accept: text/event-stream"},
		append(tok, e.url+"/events")...)...)
	if err := sse.Start(); err != nil {
		t.Fatal(err)
	}
	ended := make(chan struct{})
	var exit error
	go func() { exit = sse.Wait(); close(ended) }()
	defer func() { cancel(); <-ended }()
	waitFile(t, stream, "retry: 400\n")
	select {
	case <-ended:
		b, _ := os.ReadFile(stream)
		t.Fatalf("the quiet stream ended (%v) after %q", exit, b)
	case <-time.After(quietStream):
	}
	if r := c.do(t, "/hook/brine/quiet", append(tok, "-d", "a=b")...); r.status != 200 {
		t.Fatalf("POST /hook/brine/quiet: %d %s", r.status, r.body)
	}
	waitFile(t, stream, "tag: salt/netapi/hook/brine/quiet\n")
}

// TestE2ECurlForbiddenIP: a second salt-api on the same master whose
// authorized_ips leave out loopback answers 403 "Bad IP"
// (salt_ip_verify_tool).
func TestE2ECurlForbiddenIP(t *testing.T) {
	e := need(t)
	c := newCurl(t, e)
	url := e.extraAPI(t, "  authorized_ips: [192.0.2.1]\n")
	c.e = &env{url: url}
	r := c.do(t, "/", "-H", "Accept: application/json")
	if r.status != 403 || message(r) != "Bad IP" {
		t.Errorf("GET / from outside authorized_ips: %d %s, want 403 Bad IP", r.status, r.body)
	}
}
