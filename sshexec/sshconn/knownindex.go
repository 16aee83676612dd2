package sshconn

import (
	"bytes"
	"encoding/base64"
	"net"
	"os"
	"strings"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// knownIndex answers known_hosts lookups from a map keyed by host and
// port. x/crypto's knownhosts database matches every line against every
// address it is asked about, so a run over N hosts with a known_hosts of N
// lines does N² pattern matches (two lookups per host: the algorithm probe
// and the key check); at a thousand hosts that was a visible share of the
// controller's CPU and it grows with the square. The index holds only
// files whose every line is a plain entry (literal host names or
// addresses, "[host]:port", no hashed names, no wildcards, negations or
// markers), which is what salt-ssh, ssh-keyscan and the test harness
// write; any other file is left to x/crypto, whose answers the index
// reproduces exactly (FuzzKnownIndex compares them).
type knownIndex struct {
	byAddr map[string][]knownhosts.KnownKey // hostPort(host, port) → keys in file order
}

func hostPort(host, port string) string { return host + "\x00" + port }

// indexKnownHosts builds the index of files, or reports false when a line
// is not a plain entry (or does not parse), so that the caller uses
// x/crypto's database instead.
func indexKnownHosts(files []string) (ssh.HostKeyCallback, bool) {
	ix := &knownIndex{byAddr: map[string][]knownhosts.KnownKey{}}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil || !ix.add(data, f) {
			return nil, false
		}
	}
	cc := &ssh.CertChecker{
		// No @cert-authority or @revoked line is indexed: x/crypto's
		// checker would find no authority and nothing revoked either.
		IsHostAuthority: func(ssh.PublicKey, string) bool { return false },
		IsRevoked:       func(*ssh.Certificate) bool { return false },
		HostKeyFallback: ix.check,
	}
	return cc.CheckHostKey, true
}

// add indexes the lines of one file; false when one is not plain.
func (ix *knownIndex) add(data []byte, filename string) bool {
	for i, raw := range bytes.Split(data, []byte("\n")) {
		line := strings.Trim(string(raw), " \t\r")
		if line == "" || line[0] == '#' {
			continue
		}
		addrs, key, ok := plainLine(line)
		if !ok {
			return false
		}
		for _, a := range addrs {
			ix.byAddr[a] = append(ix.byAddr[a], knownhosts.KnownKey{Key: key, Filename: filename, Line: i + 1})
		}
	}
	return true
}

// plainLine parses "patterns keytype base64 [comment]" as x/crypto's
// knownhosts does (words split at spaces and tabs), accepting only
// literal patterns.
func plainLine(line string) (addrs []string, key ssh.PublicKey, ok bool) {
	words := strings.FieldsFunc(line, func(r rune) bool { return r == ' ' || r == '\t' })
	if len(words) < 3 || words[0][0] == '@' || words[0][0] == '|' {
		return nil, nil, false
	}
	blob, err := base64.StdEncoding.DecodeString(words[2])
	if err != nil {
		return nil, nil, false
	}
	if key, err = ssh.ParsePublicKey(blob); err != nil || key.Type() != words[1] {
		return nil, nil, false
	}
	for _, p := range strings.Split(words[0], ",") {
		if p == "" {
			continue
		}
		if strings.ContainsAny(p, "*?!") {
			return nil, nil, false
		}
		host, port, err := net.SplitHostPort(p)
		if err != nil {
			if p[0] == '[' {
				return nil, nil, false
			}
			host, port = p, "22"
		}
		addrs = append(addrs, hostPort(host, port))
	}
	return addrs, key, len(addrs) > 0
}

// check is x/crypto's hostKeyDB.check for indexed lines: the address as
// dialled is preferred to the remote address; a matching key is
// accepted, else every key known for the address is wanted.
func (ix *knownIndex) check(address string, remote net.Addr, key ssh.PublicKey) error {
	target := address
	if target == "" {
		target = remote.String()
	}
	host, port, err := net.SplitHostPort(target)
	if err != nil {
		return &net.AddrError{Err: "knownhosts: cannot split host and port", Addr: target}
	}
	keyErr := &knownhosts.KeyError{}
	blob := key.Marshal()
	for _, k := range ix.byAddr[hostPort(host, port)] {
		keyErr.Want = append(keyErr.Want, k)
		if bytes.Equal(k.Key.Marshal(), blob) {
			return nil
		}
	}
	return keyErr
}
