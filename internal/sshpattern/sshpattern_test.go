package sshpattern

import "testing"

func TestMatch(t *testing.T) {
	tests := []struct {
		p, s string
		want bool
	}{
		{"web?", "web1", true}, {"web?", "web", false}, {"web?", "web12", false},
		{"*.example.com", "a.example.com", true}, {"*.example.com", "example.com", false},
		{"10.0.*.1", "10.0.3.1", true}, {"*", "", true}, {"a*b*c", "aXbYc", true}, {"a*b*c", "aXbY", false},
	}
	for _, tc := range tests {
		if got := Match(tc.p, tc.s); got != tc.want {
			t.Errorf("Match(%q, %q) = %v", tc.p, tc.s, got)
		}
	}
}

func TestMatchHost(t *testing.T) {
	tests := []struct {
		pats []string
		host string
		want bool
	}{
		{[]string{"web*", "!web3"}, "WEB1", true},
		{[]string{"web*", "!web3"}, "web3", false},
		{[]string{"!db*"}, "web1", false}, // a negation alone matches nothing
		{[]string{"DB?"}, "db1", true},
		{nil, "x", false},
	}
	for _, tc := range tests {
		if got := MatchHost(tc.pats, tc.host); got != tc.want {
			t.Errorf("MatchHost(%q, %q) = %v", tc.pats, tc.host, got)
		}
	}
}
