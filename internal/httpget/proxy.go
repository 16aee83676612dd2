package httpget

import (
	"net"
	"net/netip"
	"net/url"
	"os"
	"strings"
)

// FromEnvironment picks a proxy for u the way net/http's
// ProxyFromEnvironment does: HTTP_PROXY or HTTPS_PROXY by scheme (either
// case), a value without a scheme meaning http://, nothing for localhost
// and loopback addresses, nothing for hosts NO_PROXY lists, and no
// HTTP_PROXY under CGI (REQUEST_METHOD set).
func FromEnvironment(u *url.URL) *url.URL {
	var val string
	switch u.Scheme {
	case "http":
		if os.Getenv("REQUEST_METHOD") == "" {
			val = getenv("HTTP_PROXY")
		}
	case "https":
		val = getenv("HTTPS_PROXY")
	}
	if val == "" || !useProxy(u, getenv("NO_PROXY")) {
		return nil
	}
	p, err := url.Parse(val)
	if err != nil || p.Host == "" || !strings.Contains(val, "://") {
		if p, err = url.Parse("http://" + val); err != nil {
			return nil
		}
	}
	return p
}

func getenv(name string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return os.Getenv(strings.ToLower(name))
}

// useProxy reports whether u's host may go through a proxy, given
// NO_PROXY: comma-separated host names (matching the host and its
// subdomains; a leading dot or "*." only subdomains), IP addresses, CIDR
// blocks, each optionally with a port, or "*" for every host.
func useProxy(u *url.URL, noProxy string) bool {
	host, port := u.Hostname(), u.Port()
	if host == "localhost" {
		return false
	}
	ip, ipErr := netip.ParseAddr(host)
	if ipErr == nil && ip.IsLoopback() {
		return false
	}
	for _, e := range strings.Split(noProxy, ",") {
		e = strings.ToLower(strings.TrimSpace(e))
		if e == "" {
			continue
		}
		if e == "*" {
			return false
		}
		if pfx, err := netip.ParsePrefix(e); err == nil {
			if ipErr == nil && pfx.Contains(ip) {
				return false
			}
			continue
		}
		ehost, eport := e, ""
		if h, p, err := net.SplitHostPort(e); err == nil {
			ehost, eport = h, p
		}
		if eport != "" && eport != port {
			continue
		}
		if eip, err := netip.ParseAddr(ehost); err == nil {
			if ipErr == nil && eip == ip {
				return false
			}
			continue
		}
		h := strings.ToLower(host)
		ehost = strings.TrimPrefix(ehost, "*")
		if strings.HasPrefix(ehost, ".") {
			if strings.HasSuffix(h, ehost) {
				return false
			}
			continue
		}
		if h == ehost || strings.HasSuffix(h, "."+ehost) {
			return false
		}
	}
	return true
}
