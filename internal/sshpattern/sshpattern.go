// Package sshpattern is OpenSSH's host pattern matching (match.c), which
// ssh_config's Host and Match lines and the flat ssh_config roster both
// use: * and ? wildcards, lists with negated entries, case-insensitive
// host names. It imports nothing of the project.
package sshpattern

import "strings"

// Match is OpenSSH's match_pattern: * matches any run of bytes and ?
// exactly one byte; everything else matches itself.
func Match(p, s string) bool {
	pi, si, star, mark := 0, 0, -1, 0
	for si < len(s) {
		switch {
		case pi < len(p) && (p[pi] == '?' || p[pi] == s[si]):
			pi++
			si++
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, si
			pi++
		case star >= 0:
			pi = star + 1
			mark++
			si = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// MatchHost is OpenSSH's match_hostname over a list of patterns: some
// pattern matches and no negated (!) one does, ignoring case.
func MatchHost(patterns []string, host string) bool {
	host = strings.ToLower(host)
	hit := false
	for _, p := range patterns {
		p, neg := strings.CutPrefix(p, "!")
		if Match(strings.ToLower(p), host) {
			if neg {
				return false
			}
			hit = true
		}
	}
	return hit
}
