package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/testsupport/apitest"
)

var hex40 = regexp.MustCompile(`^[0-9a-f]{40}$`)

// decode parses a JSON body or fails.
func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("not a JSON object: %v: %s", err, b)
	}
	return m
}

// compact is v as compact JSON, for readable comparisons.
func compact(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// wantError checks a status and Salt's error body {"status", "return"}.
func wantError(t *testing.T, what string, status int, body []byte, code int, msg string) {
	t.Helper()
	if status != code {
		t.Fatalf("%s: status %d, want %d: %s", what, status, code, body)
	}
	m := decode(t, body)
	if m["status"] != float64(code) || m["return"] != msg {
		t.Fatalf("%s: body %s, want return %q", what, body, msg)
	}
}

// post posts a JSON lowstate to path and returns the status and body.
func post(a *apitest.API, path, token string, v any) (int, []byte) {
	b, _ := json.Marshal(v)
	resp, body := a.Do("POST", path, token, "application/json", b)
	return resp.StatusCode, body
}

// eventually retries f for up to 30 s until it returns true.
func eventually(t *testing.T, what string, f func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if f() {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}

func contains(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
