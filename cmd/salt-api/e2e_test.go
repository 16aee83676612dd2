package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/brinesalt/brine/internal/testsupport/apitest"
)

// TestAPI drives salt-api over HTTPS against a real master and two
// minions with Go's HTTP client: login and sessions, every client, the
// endpoints and Salt's error answers.
func TestAPI(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemons")
	}
	a := apitest.Start(t, apitest.Options{Minions: []string{"m1", "m2"}})

	t.Run("index", func(t *testing.T) {
		resp, body := a.Do("GET", "/", "", "", nil)
		m := decode(t, body)
		if resp.StatusCode != 200 || m["return"] != "Welcome" || resp.Header.Get("Content-Type") != "application/json" ||
			compact(m["clients"]) != `["local","local_async","local_batch","local_subset","runner","runner_async","ssh","wheel","wheel_async"]` {
			t.Fatalf("GET /: %d %s %v", resp.StatusCode, body, resp.Header)
		}
	})

	var tok string
	t.Run("login", func(t *testing.T) {
		resp, body := a.Do("POST", "/login", "", "application/json", []byte(`{"username": "alice", "password": "x", "eauth": "auto"}`))
		if resp.StatusCode != 200 {
			t.Fatalf("login: %d %s", resp.StatusCode, body)
		}
		ret := decode(t, body)["return"].([]any)[0].(map[string]any)
		tok = ret["token"].(string)
		if !hex40.MatchString(tok) || resp.Header.Get("X-Auth-Token") != tok || ret["user"] != "alice" || ret["eauth"] != "auto" ||
			compact(ret["perms"]) != `[".*","@jobs","@runner","@wheel"]` || ret["expire"].(float64) <= ret["start"].(float64) {
			t.Fatalf("login answer %s, headers %v", body, resp.Header)
		}
		ck := resp.Cookies()
		if len(ck) != 1 || ck[0].Name != "session_id" || ck[0].Value != tok || ck[0].MaxAge != 36000 {
			t.Fatalf("login cookie %v", resp.Header.Values("Set-Cookie"))
		}
		resp, body = a.Do("GET", "/login", "", "", nil)
		if resp.StatusCode != 200 || resp.Header.Get("Www-Authenticate") != "Session" || string(body) != `{"status": null, "return": "Please log in"}` {
			t.Fatalf("GET /login: %d %s %v", resp.StatusCode, body, resp.Header)
		}
		code, body := post(a, "/login", "", map[string]string{"username": "alice", "password": "x", "eauth": "nosuch"})
		wantError(t, "bad eauth", code, body, 401, "Could not authenticate using provided credentials")
	})

	t.Run("local", func(t *testing.T) {
		for _, tc := range []struct {
			low  any
			want string
		}{
			{map[string]any{"client": "local", "tgt": "*", "fun": "test.ping"}, `[{"m1":true,"m2":true}]`},
			{[]any{map[string]any{"client": "local", "tgt": "m1,m2", "expr_form": "list", "fun": "test.ping", "batch": nil}}, `[{"m1":true,"m2":true}]`},
			{map[string]any{"client": "local", "tgt": "nobody", "fun": "test.ping"}, `[{}]`},
			{map[string]any{"client": "local", "tgt": "m1", "fun": "test.arg", "arg": "one", "kwarg": map[string]any{"k": 2}},
				`"args":["one"],"kwargs":{`},
			{map[string]any{"client": "local", "tgt": "m1", "fun": "test.nosuchfunc"}, `[{"m1":"'test.nosuchfunc' is not available."}]`},
			{map[string]any{"client": "local", "tgt": "m1", "fun": "cmd.run", "arg": []any{"exit 3"}}, `[{"m1":""}]`},
		} {
			code, body := post(a, "/", tok, tc.low)
			if code != 200 {
				t.Fatalf("%v: %d %s", tc.low, code, body)
			}
			if got := compact(decode(t, body)["return"]); !strings.Contains(got, tc.want) {
				t.Errorf("%v: return %s, want %s", tc.low, got, tc.want)
			}
		}
		code, body := post(a, "/", tok, map[string]any{"client": "local", "tgt": "m1", "fun": "cmd.run", "arg": "exit 3", "full_return": true})
		ret := decode(t, body)["return"].([]any)[0].(map[string]any)["m1"].(map[string]any)
		if code != 200 || ret["retcode"] != float64(3) || ret["ret"] != "" || ret["jid"] == nil {
			t.Errorf("full_return: %d %s", code, body)
		}
	})

	t.Run("local_async and jobs", func(t *testing.T) {
		code, body := post(a, "/", tok, map[string]any{"client": "local_async", "tgt": "*", "fun": "test.ping"})
		ret := decode(t, body)["return"].([]any)[0].(map[string]any)
		jid, _ := ret["jid"].(string)
		if code != 200 || len(jid) != 20 || compact(ret["minions"]) != `["m1","m2"]` {
			t.Fatalf("local_async: %d %s", code, body)
		}
		eventually(t, "the job's returns", func() bool {
			resp, body := a.Do("GET", "/jobs/"+jid, tok, "", nil)
			m := decode(t, body)
			return resp.StatusCode == 200 && compact(m["return"]) == `[{"m1":true,"m2":true}]` &&
				m["info"].([]any)[0].(map[string]any)["Function"] == "test.ping"
		})
		resp, body := a.Do("GET", "/jobs", tok, "", nil)
		if resp.StatusCode != 200 || !strings.Contains(string(body), `"`+jid+`": {"Function": "test.ping"`) {
			t.Errorf("GET /jobs: %d %.300s", resp.StatusCode, body)
		}
		resp, body = a.Do("GET", "/jobs/20200101000000000000", tok, "", nil)
		if resp.StatusCode != 200 || !strings.Contains(string(body), `"Error": "Cannot contact returner or no job with this jid"`) {
			t.Errorf("unknown jid: %d %s", resp.StatusCode, body)
		}
		code, body = post(a, "/", tok, map[string]any{"client": "local_async", "tgt": "nobody", "fun": "test.ping"})
		if code != 200 || string(body) != `{"return": [{}]}` {
			t.Errorf("local_async matching nobody: %d %s", code, body)
		}
	})

	t.Run("minions", func(t *testing.T) {
		resp, body := a.Do("GET", "/minions/m1", tok, "", nil)
		m1 := decode(t, body)["return"].([]any)[0].(map[string]any)["m1"].(map[string]any)
		if resp.StatusCode != 200 || m1["id"] != "m1" {
			t.Fatalf("GET /minions/m1: %d %.200s", resp.StatusCode, body)
		}
		code, body := post(a, "/minions", tok, map[string]any{"tgt": "m2", "fun": "test.ping"})
		m := decode(t, body)
		jid := m["return"].([]any)[0].(map[string]any)["jid"].(string)
		if code != 202 || compact(m["_links"]) != `{"jobs":[{"href":"/jobs/`+jid+`"}]}` {
			t.Fatalf("POST /minions: %d %s", code, body)
		}
		code, body = post(a, "/minions", tok, map[string]any{"tgt": "nobody", "fun": "test.ping"})
		if code != 202 || string(body) != `{"return": [{}], "_links": {"jobs": []}}` {
			t.Fatalf("POST /minions matching nobody: %d %s", code, body)
		}
	})

	t.Run("batch and subset", func(t *testing.T) {
		code, body := post(a, "/", tok, map[string]any{"client": "local_batch", "tgt": "*", "fun": "test.ping", "batch": "1"})
		got := decode(t, body)["return"].([]any)
		if code != 200 || len(got) != 2 || !slices.Contains([]string{`[{"m1":true},{"m2":true}]`, `[{"m2":true},{"m1":true}]`}, compact(got)) {
			t.Fatalf("local_batch: %d %s", code, body)
		}
		code, body = post(a, "/", tok, map[string]any{"client": "local_subset", "tgt": "*", "fun": "test.ping", "subset": 1})
		got = decode(t, body)["return"].([]any)
		if code != 200 || len(got) != 1 || len(got[0].(map[string]any)) != 1 {
			t.Fatalf("local_subset: %d %s", code, body)
		}
	})

	t.Run("runner and wheel", func(t *testing.T) {
		code, body := post(a, "/", tok, map[string]any{"client": "runner", "fun": "manage.up"})
		if code != 200 || compact(decode(t, body)["return"]) != `[["m1","m2"]]` {
			t.Errorf("runner manage.up: %d %s", code, body)
		}
		code, body = post(a, "/", tok, map[string]any{"client": "runner", "fun": "manage.up", "full_return": true})
		ret := decode(t, body)["return"].([]any)[0].(map[string]any)
		data, _ := ret["data"].(map[string]any)
		if code != 200 || !strings.HasPrefix(ret["tag"].(string), "salt/run/") || compact(data["return"]) != `["m1","m2"]` || data["fun"] != "runner.manage.up" {
			t.Errorf("runner full_return: %d %s", code, body)
		}
		for _, client := range []string{"runner_async", "wheel_async"} {
			fun := map[string]string{"runner_async": "manage.up", "wheel_async": "key.list_all"}[client]
			code, body = post(a, "/", tok, map[string]any{"client": client, "fun": fun})
			ret = decode(t, body)["return"].([]any)[0].(map[string]any)
			if code != 200 || len(ret["jid"].(string)) != 20 || !strings.HasSuffix(ret["tag"].(string), ret["jid"].(string)) {
				t.Errorf("%s: %d %s", client, code, body)
			}
		}
		code, body = post(a, "/", tok, map[string]any{"client": "wheel", "fun": "key.list_all"})
		ret = decode(t, body)["return"].([]any)[0].(map[string]any)
		data = ret["data"].(map[string]any)
		if code != 200 || data["fun"] != "wheel.key.list_all" || data["user"] != "alice" || data["success"] != true ||
			compact(data["return"].(map[string]any)["minions"]) != `["m1","m2"]` {
			t.Errorf("wheel: %d %s", code, body)
		}
		resp, body := a.Do("GET", "/keys", tok, "", nil)
		if resp.StatusCode != 200 || compact(decode(t, body)["return"].(map[string]any)["minions"]) != `["m1","m2"]` {
			t.Errorf("GET /keys: %d %s", resp.StatusCode, body)
		}
		code, body = post(a, "/", tok, map[string]any{"client": "runner", "fun": "nosuch.fun"})
		wantError(t, "unknown runner", code, body, 500, "An unexpected error occurred")
		code, body = post(a, "/", tok, map[string]any{"client": "runner"})
		wantError(t, "runner without fun", code, body, 400, "runner takes at least 1 argument (0 given)")
	})

	t.Run("run and token", func(t *testing.T) {
		code, body := post(a, "/run", "", []any{map[string]any{"client": "local", "tgt": "m1", "fun": "test.ping",
			"username": "bob", "password": "x", "eauth": "auto"}})
		if code != 200 || string(body) != `{"return": [{"m1": true}]}` {
			t.Fatalf("/run with eauth: %d %s", code, body)
		}
		code, body = post(a, "/run", "", map[string]any{"client": "local", "tgt": "m1", "fun": "test.ping"})
		wantError(t, "/run without credentials", code, body, 401, "No authentication credentials given")
		code, body = post(a, "/run", "", map[string]any{"client": "local", "tgt": "m1", "fun": "test.ping", "token": tok})
		wantError(t, "/run with a session id as token", code, body, 401, "Authentication error occurred.")
		code, body = post(a, "/token", "", map[string]any{"username": "bob", "password": "x", "eauth": "auto"})
		var toks []map[string]any
		if code != 200 || json.Unmarshal(body, &toks) != nil || len(toks) != 1 || len(fmt.Sprint(toks[0]["token"])) != 64 ||
			toks[0]["name"] != "bob" || toks[0]["perms"] != nil {
			t.Fatalf("/token: %d %s", code, body)
		}
		eauthTok := toks[0]["token"].(string)
		code, body = post(a, "/run", "", map[string]any{"client": "local", "tgt": "m1", "fun": "test.ping", "token": eauthTok})
		if code != 200 || string(body) != `{"return": [{"m1": true}]}` {
			t.Errorf("/run with the eauth token: %d %s", code, body)
		}
		for q, want := range map[string]int{"?salt_token=" + eauthTok: 200, "?token=" + tok: 200, "?token=" + eauthTok: 200,
			"?token=nothex": 401, "?salt_token=" + strings.Repeat("ab", 32): 401} {
			req, _ := http.NewRequest("GET", a.URL+"/events"+q, nil)
			req.Header.Set("Accept", "text/event-stream")
			resp, err := a.HTTP.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			first := make([]byte, 11)
			if resp.StatusCode == 200 {
				_, err = io.ReadFull(resp.Body, first)
			}
			resp.Body.Close()
			if resp.StatusCode != want || (want == 200 && (err != nil || string(first) != "retry: 400\n")) {
				t.Errorf("/events%s: %d %q %v, want %d", q, resp.StatusCode, first, err, want)
			}
		}
		code, body = post(a, "/token", "", map[string]any{"username": "bob"})
		wantError(t, "/token without a password", code, body, 400, `Require "username", "password", and "eauth" params`)
	})

	t.Run("errors", func(t *testing.T) {
		code, body := post(a, "/", "", map[string]any{"client": "local", "tgt": "*", "fun": "test.ping"})
		wantError(t, "no session", code, body, 401, "No permission -- see authorization schemes")
		code, body = post(a, "/", "0123456789abcdef0123456789abcdef01234567", map[string]any{"client": "local"})
		wantError(t, "unknown session", code, body, 401, "No permission -- see authorization schemes")
		code, body = post(a, "/", tok, map[string]any{"client": "nosuch", "fun": "test.ping"})
		wantError(t, "bad client", code, body, 400, "Invalid client specified: 'nosuch'")
		code, body = post(a, "/", tok, map[string]any{"fun": "test.ping"})
		wantError(t, "no client", code, body, 400, "Invalid client specified: 'None'")
		code, body = post(a, "/", tok, "just a string")
		wantError(t, "not a list", code, body, 400, "Lowstates must be a list")
		code, body = post(a, "/", tok, map[string]any{"client": "local", "fun": "test.ping"})
		wantError(t, "no tgt", code, body, 500, "An unexpected error occurred")
		resp, body := a.Do("POST", "/", tok, "application/json", []byte(`{"client": `))
		wantError(t, "bad JSON", resp.StatusCode, body, 400, "Invalid JSON document")
		resp, body = a.Do("POST", "/", tok, "application/xml", []byte(`<a/>`))
		if resp.StatusCode != 406 || !strings.Contains(string(body), "<p>Content type not supported</p>") {
			t.Errorf("unsupported body type: %d %s", resp.StatusCode, body)
		}
		req, _ := http.NewRequest("GET", a.URL+"/", nil)
		req.Header.Set("Accept", "text/html")
		r, err := a.HTTP.Do(req)
		if err != nil || r.StatusCode != 406 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
			t.Errorf("Accept text/html: %v %v", err, r)
		}
		for _, m := range []string{"PUT", "DELETE"} {
			resp, body = a.Do(m, "/", tok, "", nil)
			wantError(t, m, resp.StatusCode, body, 405, "Specified method is invalid for this resource")
		}
		resp, _ = a.Do("HEAD", "/", "", "", nil)
		if resp.StatusCode != 200 {
			t.Errorf("HEAD /: %d", resp.StatusCode)
		}
		resp, body = a.Do("GET", "/nosuch", "", "", nil)
		wantError(t, "unknown path", resp.StatusCode, body, 404, "The path '/nosuch' was not found.")
	})

	t.Run("stats", func(t *testing.T) {
		resp, body := a.Do("GET", "/stats", tok, "", nil)
		if resp.StatusCode != 200 || !strings.Contains(string(body), `"CherryPy Applications": {"salt-api": {"Enabled": false`) {
			t.Errorf("GET /stats: %d %s", resp.StatusCode, body)
		}
		resp, body = a.Do("GET", "/stats", "", "", nil)
		wantError(t, "/stats without a session", resp.StatusCode, body, 401, "No permission -- see authorization schemes")
	})

	t.Run("silent minion", func(t *testing.T) {
		m2 := a.Minions["m2"]
		m2.Process.Signal(os.Interrupt)
		m2.Wait()
		delete(a.Minions, "m2")
		code, body := post(a, "/", tok, map[string]any{"client": "local", "tgt": "*", "fun": "test.ping"})
		if code != 200 || string(body) != `{"return": [{"m1": true, "m2": false}]}` {
			t.Errorf("a minion that does not return is False: %d %s", code, body)
		}
	})

	t.Run("logout", func(t *testing.T) {
		other := a.Login("carol", "x", "auto")
		resp, body := a.Do("POST", "/logout", other, "", nil)
		if resp.StatusCode != 200 || string(body) != `{"return": "Your token has been cleared"}` {
			t.Fatalf("logout: %d %s", resp.StatusCode, body)
		}
		if ck := resp.Cookies(); len(ck) != 1 || ck[0].MaxAge >= 0 {
			t.Errorf("logout cookie %v", resp.Header.Values("Set-Cookie"))
		}
		code, body := post(a, "/", other, map[string]any{"client": "local", "tgt": "*", "fun": "test.ping"})
		wantError(t, "after logout", code, body, 401, "No permission -- see authorization schemes")
	})
}
