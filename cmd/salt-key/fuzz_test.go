package main

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzSaltKeyMatch runs salt-key's key actions with any match argument
// (a glob, a comma list, or with -E a regular expression) over a pki
// directory holding keys in every state: it must answer with a retcode,
// never panic, and never touch a file outside the pki directory.
func FuzzSaltKeyMatch(f *testing.F) {
	for _, s := range []string{"*", "web*", "web1,db1", "[", "\\", "../*", "web1/../../x", "", "*,", "a{b,c}", "(", ".*"} {
		f.Add(s, "-a", false)
		f.Add(s, "-d", true)
	}
	f.Add("db?", "-r", false)
	f.Add("x", "-f", true)
	f.Add("x", "-p", false)
	f.Fuzz(func(t *testing.T, match, action string, pcre bool) {
		switch action {
		case "-a", "-d", "-r", "-f", "-p", "-l":
		default:
			action = "-a"
		}
		e := newEnv(t)
		e.key("minions_pre", "web1", e.pub)
		e.key("minions", "db1", e.alt)
		e.key("minions_rejected", "web2", e.pub)
		args := []string{action, match, "-y", "--out", "json"}
		if pcre {
			args = append(args, "-E")
		}
		if _, _, code := e.run("", args...); code < 0 || code > 255 {
			t.Fatalf("retcode %d", code)
		}
		root := filepath.Dir(e.pkiDir)
		entries, err := os.ReadDir(root)
		if err != nil {
			t.Fatal(err)
		}
		for _, ent := range entries {
			if n := ent.Name(); n != "etc" && n != "pki" && n != "cache" {
				t.Fatalf("salt-key %v wrote %s outside the pki directory", args, n)
			}
		}
	})
}
