package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/internal/testsupport/apitest"
	"github.com/brinesalt/brine/internal/testsupport/testhosts"
)

// TestCorners runs salt-api with a limited user, a small body limit,
// few clients, an app and static files, an unauthenticated webhook and
// an access log, and checks the odd corners with curl, the event
// streams byte for byte, and that salt-api stops when its master does.
func TestCorners(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemons")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		testhosts.Skip(t, "curl is not installed (scripts/install-deps.sh)")
	}
	web := t.TempDir()
	os.WriteFile(filepath.Join(web, "index.html"), []byte("<html>app</html>"), 0o644)
	os.MkdirAll(filepath.Join(web, "static", "js"), 0o755)
	os.WriteFile(filepath.Join(web, "static", "js", "app.mjs"), []byte("export {}"), 0o644)
	os.WriteFile(filepath.Join(web, "static", "app.js"), []byte("1"), 0o644)
	os.WriteFile(filepath.Join(web, "static", "app.css"), []byte("a{}"), 0o644)
	access := filepath.Join(web, "access.log")
	a := apitest.Start(t, apitest.Options{Minions: []string{"m1"},
		MasterConf: `auto_accept: True
external_auth:
  auto:
    alice: [.*, '@runner', '@wheel', '@jobs']
    limited: [test.ping]
netapi_enable_clients: [local, local_async, runner, wheel]
`,
		APIConf: fmt.Sprintf(`  max_request_body_size: 2048
  webhook_disable_auth: True
  app: %s/index.html
  static: %s/static
  log_access_file: %s
  thread_pool: 4
  no_such_option: 1
`, web, web, access)})
	tok := a.Login("alice", "x", "auto")

	t.Run("unknown option warned", func(t *testing.T) {
		if !strings.Contains(a.Log(), `rest_cherrypy: option \"no_such_option\" is not supported`) &&
			!strings.Contains(a.Log(), `rest_cherrypy: option "no_such_option" is not supported`) {
			t.Errorf("no warning for no_such_option in\n%s", a.Log())
		}
	})

	t.Run("form and yaml with curl", func(t *testing.T) {
		out := a.Curl(a.URL+"/", "-H", "Accept: application/x-yaml", "-H", "X-Auth-Token: "+tok,
			"-d", "client=local", "-d", "tgt=m1", "-d", "fun=test.arg", "-d", "arg=1", "-d", "arg={a: b}")
		if !contains(out, "return:\n- m1:\n    args:\n    - 1\n    - a: b\n") {
			t.Errorf("form body, YAML answer:\n%s", out)
		}
		out = a.Curl(a.URL+"/", "-H", "Accept: application/json", "-H", "X-Auth-Token: "+tok,
			"-H", "Content-Type: application/x-yaml", "--data-binary", "client: local\ntgt: m1\nfun: test.ping\n")
		if out != `{"return": [{"m1": true}]}` {
			t.Errorf("YAML body: %s", out)
		}
		out = a.Curl(a.URL+"/login", "-c", filepath.Join(web, "cookies"), "-d", "username=alice", "-d", "password=x", "-d", "eauth=auto")
		if !strings.Contains(out, `"user": "alice"`) {
			t.Errorf("form login: %s", out)
		}
		out = a.Curl(a.URL+"/", "-b", filepath.Join(web, "cookies"), "-H", "Content-Type: text/plain;charset=UTF-8",
			"--data-binary", `{"client": "local", "tgt": "m1", "fun": "test.ping"}`)
		if out != `{"return": [{"m1": true}]}` {
			t.Errorf("cookie session, text/plain JSON body: %s", out)
		}
	})

	t.Run("status codes with curl", func(t *testing.T) {
		code := func(args ...string) string {
			return a.Curl(append([]string{"-o", "/dev/null", "-w", "%{http_code}"}, args...)...)
		}
		big := strings.Repeat("x", 4096)
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{a.URL + "/minions"}, "401"},
			{[]string{a.URL + "/", "-H", "Accept: image/png"}, "406"},
			{[]string{a.URL + "/", "-H", "X-Auth-Token: " + tok, "-d", "arg=" + big}, "413"},
			{[]string{a.URL + "/", "-H", "X-Auth-Token: " + tok, "-H", "Transfer-Encoding: chunked", "-d", "arg=" + big}, "413"},
			{[]string{"-X", "PUT", a.URL + "/"}, "405"},
			{[]string{a.URL + "/", "-H", "X-Auth-Token: " + tok, "-d", "client=ssh", "-d", "tgt=*", "-d", "fun=test.ping"}, "400"},
		} {
			if got := code(tc.args...); got != tc.want {
				t.Errorf("curl %v: %s, want %s", tc.args, got, tc.want)
			}
		}
		out := a.Curl(a.URL+"/", "-H", "X-Auth-Token: "+tok, "-d", "client=ssh", "-d", "tgt=*", "-d", "fun=test.ping")
		if out != `{"status": 400, "return": "Client disabled: 'ssh'. Add to 'netapi_enable_clients' master config option to enable."}` {
			t.Errorf("disabled client: %s", out)
		}
	})

	t.Run("authorization", func(t *testing.T) {
		lim := a.Login("limited", "x", "auto")
		code, body := post(a, "/", lim, map[string]any{"client": "local", "tgt": "m1", "fun": "test.ping"})
		if code != 200 || string(body) != `{"return": [{"m1": true}]}` {
			t.Errorf("allowed function: %d %s", code, body)
		}
		code, body = post(a, "/", lim, map[string]any{"client": "local", "tgt": "m1", "fun": "cmd.run", "arg": "id"})
		wantError(t, "denied function", code, body, 401, "Authorization error occurred.")
		code, body = post(a, "/", lim, map[string]any{"client": "runner", "fun": "manage.up"})
		if code != 401 {
			t.Errorf("denied runner: %d %s", code, body)
		}
	})

	t.Run("cors preflight", func(t *testing.T) {
		out := a.Curl("-i", "--http1.1", "-X", "OPTIONS", a.URL+"/", "-H", "Origin: https://ui.example", "-H", "Access-Control-Request-Method: POST",
			"-H", "Access-Control-Request-Headers: X-Auth-Token")
		for _, h := range []string{"HTTP/1.1 200", "Access-Control-Allow-Origin: https://ui.example", "Access-Control-Allow-Credentials: true",
			"Access-Control-Expose-Headers: GET, POST", "Access-Control-Allow-Methods: GET, POST",
			"Access-Control-Allow-Headers: Content-Type, X-Auth-Token, X-Requested-With", "Access-Control-Max-Age: 1400"} {
			if !strings.Contains(strings.ReplaceAll(out, "\r\n", "\n"), h) {
				t.Errorf("preflight lacks %q:\n%s", h, out)
			}
		}
	})

	t.Run("keys tar", func(t *testing.T) {
		resp, body := a.Do("POST", "/keys", "", "application/x-www-form-urlencoded",
			[]byte("mid=newbie&username=alice&password=x&eauth=auto"))
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/x-tar" ||
			resp.Header.Get("Content-Disposition") != `attachment; filename="saltkeys-newbie.tar"` {
			t.Fatalf("POST /keys: %d %v %.200s", resp.StatusCode, resp.Header, body)
		}
		tr := tar.NewReader(bytes.NewReader(body))
		var names []string
		for {
			h, err := tr.Next()
			if err != nil {
				break
			}
			b, _ := io.ReadAll(tr)
			names = append(names, h.Name)
			if !bytes.Contains(b, []byte("-----BEGIN")) {
				t.Errorf("%s is not a PEM key: %q", h.Name, b)
			}
		}
		if strings.Join(names, ",") != "minion.pub,minion.pem" {
			t.Errorf("tar members %v", names)
		}
	})

	t.Run("app and static", func(t *testing.T) {
		browser := "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
		out := a.Curl("-i", "--http1.1", a.URL+"/", "-H", "Accept: "+browser)
		if !contains(out, "Content-Type: text/html", "<html>app</html>") {
			t.Errorf("GET / from a browser:\n%s", out)
		}
		for path, ct := range map[string]string{"/static/app.js": "text/javascript", "/static/js/app.mjs": "text/javascript",
			"/static/app.css": "text/css", "/app/some/route": "text/html"} {
			got := a.Curl("-o", "/dev/null", "-w", "%{http_code} %{content_type}", a.URL+path)
			if !strings.HasPrefix(got, "200 "+ct) {
				t.Errorf("%s: %s, want 200 %s", path, got, ct)
			}
		}
		for _, path := range []string{"/static/../index.html", "/static/js", "/static/nosuch.js"} {
			if got := a.Curl("-o", "/dev/null", "-w", "%{http_code}", "--path-as-is", a.URL+path); got != "404" {
				t.Errorf("%s: %s, want 404", path, got)
			}
		}
	})

	t.Run("events framing and hook", func(t *testing.T) {
		// An EventSource sends only the cookie.
		req, _ := http.NewRequest("GET", a.URL+"/events", nil)
		req.AddCookie(&http.Cookie{Name: "session_id", Value: tok})
		req.Header.Set("Accept", "text/event-stream")
		resp, err := a.HTTP.Do(req)
		if err != nil || resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream;charset=utf-8" ||
			resp.Header.Get("Cache-Control") != "no-cache" {
			t.Fatalf("GET /events: %v %v", err, resp)
		}
		defer resp.Body.Close()
		rd := bufio.NewReader(resp.Body)
		first := make([]byte, len("retry: 400\n"))
		if _, err := io.ReadFull(rd, first); err != nil || string(first) != "retry: 400\n" {
			t.Fatalf("stream starts %q, %v", first, err)
		}
		out := a.Curl(a.URL+"/hook/my/app", "-H", "Content-Type: application/json", "-H", "X-Auth-Token: secret-should-not-show",
			"--data-binary", `{"build": 42}`)
		if out != `{"success": true}` {
			t.Fatalf("hook: %s", out)
		}
		tag, data := readEvent(t, rd, "salt/netapi/hook/my/app")
		post := data["post"].(*ordered.Map)
		headers := data["headers"].(*ordered.Map)
		if tag != "salt/netapi/hook/my/app" || data["body"] != `{"build": 42}` || post.Value("build") != 42 ||
			headers.Has("X-Auth-Token") || headers.Value("Content-Type") != "application/json" {
			t.Errorf("hook event %v", py.Repr(data))
		}
	})

	t.Run("websocket", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		ws := "wss" + strings.TrimPrefix(a.URL, "https") + "/ws/" + tok
		conn, _, err := websocket.Dial(ctx, ws, &websocket.DialOptions{HTTPClient: a.HTTP})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.CloseNow()
		if err := conn.Write(ctx, websocket.MessageText, []byte("websocket client ready")); err != nil {
			t.Fatal(err)
		}
		if _, msg, err := conn.Read(ctx); err != nil || string(msg) != "server received message" {
			t.Fatalf("ack %q %v", msg, err)
		}
		a.Curl(a.URL+"/hook/ws", "-d", "x=1")
		for {
			_, msg, err := conn.Read(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if s := string(msg); strings.HasPrefix(s, "data: ") && strings.HasSuffix(s, "\n\n") && strings.Contains(s, `"tag": "salt/netapi/hook/ws"`) {
				break
			}
		}
		if _, _, err := websocket.Dial(ctx, "wss"+strings.TrimPrefix(a.URL, "https")+"/ws/deadbeef", &websocket.DialOptions{HTTPClient: a.HTTP}); err == nil {
			t.Error("a websocket with an unknown session was accepted")
		}
	})

	t.Run("idle TLS connection delays nobody", func(t *testing.T) {
		idle, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", a.Port))
		if err != nil {
			t.Fatal(err)
		}
		defer idle.Close()
		fresh := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: a.CAPool}}}
		resp, err := fresh.Get(a.URL + "/")
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET / beside an idle connection: %v %v", err, resp)
		}
		resp.Body.Close()
		// The request was answered while the idle connection is still
		// waiting for its handshake: the server did not have to give up
		// on it first.
		idle.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		var ne net.Error
		if _, err := idle.Read(make([]byte, 1)); !errors.As(err, &ne) || !ne.Timeout() {
			t.Errorf("the idle connection was closed before the request was answered: %v", err)
		}
	})

	t.Run("access log keeps no secrets", func(t *testing.T) {
		a.Curl("-o", "/dev/null", "--http1.1", a.URL+"/events?token=deadbeefcafe&salt_token=abcdef12")
		b, _ := os.ReadFile(access)
		if !strings.Contains(string(b), `"GET /events?token=***&salt_token=*** HTTP/1.1" 401`) {
			t.Errorf("access log:\n%s", b)
		}
		if strings.Contains(string(b), tok) || strings.Contains(string(b), "deadbeefcafe") {
			t.Errorf("a token reached the access log:\n%s", b)
		}
	})

	t.Run("master goes away", func(t *testing.T) {
		p := a.Process()
		a.StopMaster()
		done := make(chan error, 1)
		go func() { done <- p.Wait() }()
		select {
		case err := <-done:
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(a.Log(), "the salt master went away") {
				t.Errorf("salt-api exit %v; log:\n%s", err, a.Log())
			}
		case <-time.After(time.Minute):
			t.Fatal("salt-api kept running without its master")
		}
		a.StartMaster()
	})
}

// readEvent reads SSE frames until one with tag want, checking each is
// exactly "tag: <tag>\ndata: <json.dumps({data, tag})>\n\n".
func readEvent(t *testing.T, rd *bufio.Reader, want string) (string, map[string]any) {
	t.Helper()
	for {
		tagLine, err := rd.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		dataLine, err := rd.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		blank, err := rd.ReadString('\n')
		if err != nil || blank != "\n" || !strings.HasPrefix(tagLine, "tag: ") || !strings.HasPrefix(dataLine, "data: ") {
			t.Fatalf("frame %q %q %q", tagLine, dataLine, blank)
		}
		tag := strings.TrimSuffix(strings.TrimPrefix(tagLine, "tag: "), "\n")
		js := strings.TrimSuffix(strings.TrimPrefix(dataLine, "data: "), "\n")
		v, err := ordered.DecodeJSON(strings.NewReader(js))
		if err != nil {
			t.Fatalf("data %q: %v", js, err)
		}
		full := v.(*ordered.Map)
		again, _ := py.JSON(full, py.JSONOptions{Indent: -1})
		if again != js || compact(full.Keys()) != `["data","tag"]` || full.Value("tag") != tag {
			t.Fatalf("data is not json.dumps({data, tag}): %q", js)
		}
		if tag == want {
			m := map[string]any{}
			full.Value("data").(*ordered.Map).Range(func(k, v any) bool { m[k.(string)] = v; return true })
			return tag, m
		}
	}
}
