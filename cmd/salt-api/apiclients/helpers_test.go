package apiclients

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/testsupport/testhosts"
)

// insecure is the tests' own Go client, used only to set things up and
// to read what the real clients did: the certificate is self-signed.
var insecure = &http.Client{
	Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}},
	Timeout:   time.Minute,
}

// request sends one request and returns the status, headers and body
// (status 0 when it could not be sent).
func request(method, url string, hdr map[string]string, body []byte) (int, http.Header, []byte) {
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, nil
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := insecure.Do(req)
	if err != nil {
		return 0, nil, []byte(err.Error())
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

// login logs user in with eauth and returns the session token.
func (e *env) login(t *testing.T, user, eauth string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"username": user, "password": e.passwd[user], "eauth": eauth})
	status, _, b := request("POST", e.url+"/login", map[string]string{"Content-Type": "application/json", "Accept": "application/json"}, body)
	var out struct {
		Return []struct {
			Token string `json:"token"`
		} `json:"return"`
	}
	if status != 200 || json.Unmarshal(b, &out) != nil || len(out.Return) != 1 || out.Return[0].Token == "" {
		t.Fatalf("login %s: %d %s", user, status, b)
	}
	return out.Return[0].Token
}

// event is one Server-Sent Event of /events, decoded.
type event struct {
	Tag  string         `json:"tag"`
	Data map[string]any `json:"data"`
}

// events reads /events with token until the test ends; the stream's
// events arrive on the returned channel.
func (e *env) events(t *testing.T, token string) <-chan event {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", e.url+"/events", nil)
	req.Header.Set("X-Auth-Token", token)
	// As EventSource does: with app set, a request without Accept is an
	// HTML request and gets the app (rest_cherrypy's html_override).
	req.Header.Set("Accept", "text/event-stream")
	resp, err := (&http.Client{Transport: insecure.Transport}).Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /events: %v %v", err, resp)
	}
	ch := make(chan event, 1000)
	go func() {
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var ev event
			if json.Unmarshal([]byte(data), &ev) == nil {
				select {
				case ch <- ev:
				default: // a test that stopped reading does not stall the stream
				}
			}
		}
	}()
	return ch
}

// waitEvent returns the first event on ch whose tag has prefix, failing
// t after timeout.
func waitEvent(t *testing.T, ch <-chan event, prefix string, timeout time.Duration) event {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case ev := <-ch:
			if strings.HasPrefix(ev.Tag, prefix) {
				return ev
			}
		case <-deadline:
			t.Fatalf("no event %s* within %s", prefix, timeout)
		}
	}
}

// tool returns the path of a program the tests need, or skips t through
// testhosts.Skip naming the package that brings it.
func tool(t *testing.T, name, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		testhosts.Skip(t, name+" not installed (scripts/install-deps.sh installs "+pkg+")")
	}
	return p
}
