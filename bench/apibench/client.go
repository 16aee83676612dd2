package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// api is one salt-api base URL with a session token, spoken to the way
// pepper and the seed's requests client speak to it: JSON bodies,
// X-Auth-Token, keep-alive connections, certificate not verified (the
// server's is self-signed).
type api struct {
	base  string
	hc    *http.Client
	token string
}

// newAPI returns a client for base keeping up to conns connections.
func newAPI(base string, conns int) *api {
	tr := &http.Transport{
		TLSClientConfig:     &tls.Config{InsecureSkipVerify: true},
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		IdleConnTimeout:     time.Minute,
		ForceAttemptHTTP2:   false,
	}
	return &api{base: strings.TrimSuffix(base, "/"), hc: &http.Client{Transport: tr, Timeout: 2 * time.Minute}}
}

// httpError is a status other than the one a call expects.
type httpError struct {
	Status int
	Body   string
}

func (e *httpError) Error() string {
	return fmt.Sprintf("HTTP %d: %.200s", e.Status, e.Body)
}

// do sends one request and decodes a JSON answer into out (nil: discard).
func (a *api) do(ctx context.Context, method, path string, body any, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("encode body: %w", err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, rd)
	if err != nil {
		return fmt.Errorf("new request: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if a.token != "" {
		req.Header.Set("X-Auth-Token", a.token)
	}
	resp, err := a.hc.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if resp.StatusCode/100 != 2 {
		return &httpError{Status: resp.StatusCode, Body: string(data)}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("decode %s: %w", path, err)
	}
	return nil
}

// login posts credentials to /login and returns return[0].token.
func (a *api) login(ctx context.Context, user, pass, eauth string) (string, error) {
	var out struct {
		Return []struct {
			Token string `json:"token"`
		} `json:"return"`
	}
	err := a.do(ctx, "POST", "/login", map[string]string{"username": user, "password": pass, "eauth": eauth}, &out)
	if err != nil {
		return "", err
	}
	if len(out.Return) != 1 || out.Return[0].Token == "" {
		return "", errors.New("login: no token in the answer")
	}
	return out.Return[0].Token, nil
}

// lowstate is one chunk of POST /.
type lowstate map[string]any

// run posts one lowstate chunk to / and returns return[0].
func (a *api) run(ctx context.Context, chunk lowstate) (map[string]json.RawMessage, error) {
	var out struct {
		Return []map[string]json.RawMessage `json:"return"`
	}
	if err := a.do(ctx, "POST", "/", []lowstate{chunk}, &out); err != nil {
		return nil, err
	}
	if len(out.Return) != 1 {
		return nil, fmt.Errorf("POST /: %d returns for one chunk", len(out.Return))
	}
	return out.Return[0], nil
}

// localAsync publishes fun to tgt and returns the jid.
func (a *api) localAsync(ctx context.Context, tgt, fun string) (string, error) {
	ret, err := a.run(ctx, lowstate{"client": "local_async", "tgt": tgt, "fun": fun})
	if err != nil {
		return "", err
	}
	var jid string
	if err := json.Unmarshal(ret["jid"], &jid); err != nil || jid == "" {
		return "", fmt.Errorf("local_async: no jid in %v", ret)
	}
	return jid, nil
}
