package main

import (
	"slices"
	"testing"
)

// TestDaemonArgs pins how the thin binary picks a daemon: by the name it
// is called, or by its first argument.
func TestDaemonArgs(t *testing.T) {
	for _, tc := range []struct {
		argv         []string
		minion, synd bool
		args         []string
	}{
		{[]string{"/usr/bin/salt-minion", "-c", "/etc/salt"}, true, false, []string{"-c", "/etc/salt"}},
		{[]string{"salt-thin", "minion", "-l", "info"}, true, false, []string{"-l", "info"}},
		{[]string{"/usr/bin/salt-syndic", "-c", "/etc/salt"}, false, true, []string{"-c", "/etc/salt"}},
		{[]string{"salt-thin", "syndic", "-c", "d"}, false, true, []string{"-c", "d"}},
		{[]string{"salt-thin", "test.ping"}, false, false, nil},
	} {
		ma, mok := minionArgs(tc.argv)
		sa, sok := syndicArgs(tc.argv)
		if mok != tc.minion || sok != tc.synd {
			t.Errorf("%v: minion %v syndic %v", tc.argv, mok, sok)
		}
		got := ma
		if sok {
			got = sa
		}
		if !slices.Equal(got, tc.args) {
			t.Errorf("%v: args %v, want %v", tc.argv, got, tc.args)
		}
	}
}
