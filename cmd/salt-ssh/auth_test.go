package main

import (
	"errors"
	"testing"
)

func TestAskPassword(t *testing.T) {
	calls := 0
	read := func(string) (string, error) { calls++; return "typed", nil }
	o := &options{askpass: true}
	if err := askPassword(o, read); err != nil || o.passwd != "typed" {
		t.Fatalf("askPassword = %v, passwd %q", err, o.passwd)
	}
	o = &options{askpass: true, passwd: "given"}
	if err := askPassword(o, read); err != nil || o.passwd != "given" || calls != 1 {
		t.Fatalf("--passwd should win without a prompt: %v %q %d", err, o.passwd, calls)
	}
	o = &options{askpass: true}
	if err := askPassword(o, func(string) (string, error) { return "", errors.New("no tty") }); err == nil {
		t.Fatal("error not reported")
	}
}
