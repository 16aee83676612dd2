package sshconn

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// JumpHost is one hop of a ProxyJump value: [user@]host[:port] or
// ssh://[user@]host[:port]. Zero User and Port mean "not given".
type JumpHost struct {
	User string
	Host string
	Port int
}

// String renders the hop as ProxyJump writes it.
func (j JumpHost) String() string {
	s := j.Host
	if strings.Contains(s, ":") {
		s = "[" + s + "]"
	}
	if j.User != "" {
		s = j.User + "@" + s
	}
	if j.Port != 0 {
		s += ":" + strconv.Itoa(j.Port)
	}
	return s
}

// ParseProxyJump parses OpenSSH's ProxyJump value: hops separated by
// commas, in the order they are dialled. "none" and "" give no hops.
func ParseProxyJump(v string) ([]JumpHost, error) {
	v = strings.TrimSpace(v)
	if v == "" || strings.EqualFold(v, "none") {
		return nil, nil
	}
	var out []JumpHost
	for _, part := range strings.Split(v, ",") {
		j, err := parseJumpHost(strings.TrimSpace(part))
		if err != nil {
			return nil, fmt.Errorf("ProxyJump %q: %w", v, err)
		}
		out = append(out, j)
	}
	return out, nil
}

func parseJumpHost(s string) (JumpHost, error) {
	if s == "" {
		return JumpHost{}, fmt.Errorf("empty hop")
	}
	if strings.HasPrefix(s, "ssh://") {
		u, err := url.Parse(s)
		if err != nil || u.Hostname() == "" || (u.Path != "" && u.Path != "/") {
			return JumpHost{}, fmt.Errorf("bad hop %q", s)
		}
		j := JumpHost{User: u.User.Username(), Host: u.Hostname()}
		if p := u.Port(); p != "" {
			n, err := strconv.Atoi(p)
			if err != nil || n < 1 || n > 65535 {
				return JumpHost{}, fmt.Errorf("bad port in hop %q", s)
			}
			j.Port = n
		}
		return j, nil
	}
	var j JumpHost
	if i := strings.LastIndex(s, "@"); i >= 0 {
		j.User, s = s[:i], s[i+1:]
		if j.User == "" {
			return JumpHost{}, fmt.Errorf("empty user in hop %q", s)
		}
	}
	host, port := s, ""
	switch {
	case strings.HasPrefix(s, "["):
		h, p, err := net.SplitHostPort(s)
		if err != nil {
			h = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
			p = ""
			if strings.ContainsAny(h, "[]") {
				return JumpHost{}, fmt.Errorf("bad hop %q", s)
			}
		}
		host, port = h, p
	case strings.Count(s, ":") == 1:
		host, port, _ = strings.Cut(s, ":")
	}
	if host == "" || strings.ContainsAny(host, " \t/[]@,") {
		return JumpHost{}, fmt.Errorf("bad hop %q", s)
	}
	j.Host = host
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return JumpHost{}, fmt.Errorf("bad port in hop %q", s)
		}
		j.Port = n
	}
	return j, nil
}
