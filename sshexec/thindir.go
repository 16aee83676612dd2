package sshexec

import (
	"net"
	"os"
	"strings"
)

// FQDN returns the controller's fully qualified name the way Salt's
// salt.utils.network.get_fqhostname does in the common case: the
// hostname's canonical name when the resolver knows one, else the
// hostname. It names the default thin_dir (roster.DefaultThinDir).
func FQDN() string {
	host, err := os.Hostname()
	if err != nil {
		return "localhost"
	}
	if cname, err := net.LookupCNAME(host); err == nil && cname != "" {
		return strings.TrimSuffix(cname, ".")
	}
	return host
}
