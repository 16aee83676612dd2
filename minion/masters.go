package minion

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/config"
)

// Master types (master_type).
const (
	MasterTypeStr      = "str"
	MasterTypeFailover = "failover"
)

// ErrMasterType is a master_type Brine does not run: "func" (a module
// function naming the master) and "disable", and anything else Salt
// also refuses.
var ErrMasterType = errors.New("master_type not supported")

// masterEntry is one address of the master list with its request port.
// A "host:port" entry carries its own port, which Salt's prep_ip_port
// reads too; unlike Salt's failover (whose alive check looks for the
// bare host in the list and so never fails over), Brine keeps the entry
// whole, so failover works with ports.
type masterEntry struct {
	host string
	port int
}

func (e masterEntry) String() string { return net.JoinHostPort(e.host, strconv.Itoa(e.port)) }

// parseMaster is salt.utils.network.parse_host_port for one master
// entry: "host", "host:port", "[v6]:port" or a bare IPv6 address.
func parseMaster(s string, defPort int) (masterEntry, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return masterEntry{}, errors.New("empty master address")
	}
	bare := s
	if inner, ok := strings.CutPrefix(s, "["); ok && strings.HasSuffix(inner, "]") {
		bare = strings.TrimSuffix(inner, "]")
	}
	if ip, err := netip.ParseAddr(bare); err == nil && (ip.Zone() == "" || validHost(ip.Zone())) {
		return masterEntry{host: ip.String(), port: defPort}, nil
	}
	if !strings.Contains(s, ":") {
		if !validHost(s) {
			return masterEntry{}, fmt.Errorf("master %q: not a host name or address", s)
		}
		return masterEntry{host: s, port: defPort}, nil
	}
	h, p, err := net.SplitHostPort(s)
	if err != nil {
		return masterEntry{}, fmt.Errorf("master %q: %w", s, err)
	}
	n, err := strconv.Atoi(p)
	if err != nil || n <= 0 || n > 65535 {
		return masterEntry{}, fmt.Errorf("master %q: bad port %q", s, p)
	}
	if ip, err := netip.ParseAddr(h); err == nil && (ip.Zone() == "" || validHost(ip.Zone())) {
		h = ip.String()
	} else if !validHost(h) {
		return masterEntry{}, fmt.Errorf("master %q: not a host name or address", s)
	}
	return masterEntry{host: h, port: n}, nil
}

// validHost accepts what can be a DNS name: no separators, brackets or
// spaces, which would not survive being joined with a port.
func validHost(h string) bool {
	return h != "" && !strings.ContainsAny(h, "[]:/@ \t\r\n\x00")
}

// parseMasterIPOnly is prep_ip_port with master_uri_format ip_only: the
// entry is the master's address as it is, with master_port, never
// split for a port. Salt requires an IP address there
// (ipaddress.ip_address); its documentation allows a domain name too,
// and so does Brine. A bracketed or host:port entry is refused.
func parseMasterIPOnly(s string, defPort int) (masterEntry, error) {
	s = strings.TrimSpace(s)
	if ip, err := netip.ParseAddr(s); err == nil && (ip.Zone() == "" || validHost(ip.Zone())) {
		return masterEntry{host: ip.String(), port: defPort}, nil
	}
	if !validHost(s) {
		return masterEntry{}, fmt.Errorf("master %q: master_uri_format is ip_only, so the entry must be an IP address or name alone (its port is master_port)", s)
	}
	return masterEntry{host: s, port: defPort}, nil
}

// masterList parses the configured masters in order; an empty list is
// Salt's default "salt".
func masterList(c *config.Minion) ([]masterEntry, error) {
	names := c.Masters
	if len(names) == 0 {
		names = []string{"salt"}
	}
	parse := parseMaster
	switch c.MasterURIFormat {
	case "", "default":
	case "ip_only":
		parse = parseMasterIPOnly
	default:
		return nil, fmt.Errorf("config %s: master_uri_format %q: want default or ip_only", c.File, c.MasterURIFormat)
	}
	out := make([]masterEntry, 0, len(names))
	for _, n := range names {
		e, err := parse(n, c.MasterPort)
		if err != nil {
			return nil, fmt.Errorf("config %s: %w", c.File, err)
		}
		out = append(out, e)
	}
	return out, nil
}

// checkMasterType refuses what Brine does not implement, with the
// error Salt's eval_master logs for a bad keyword.
func checkMasterType(c *config.Minion) error {
	switch c.MasterType {
	case "", MasterTypeStr:
		return nil
	case MasterTypeFailover:
		if len(c.Masters) == 0 {
			return fmt.Errorf("config %s: master_type set to 'failover' but 'master' is not a list: %w", c.File, ErrMasterType)
		}
		return nil
	case "func", "disable", "distributed":
		return fmt.Errorf("config %s: master_type %q: %w (use a list of masters with master_type str or failover)", c.File, c.MasterType, ErrMasterType)
	}
	return fmt.Errorf("config %s: invalid keyword %q for variable 'master_type': %w", c.File, c.MasterType, ErrMasterType)
}

// failover reports whether the minion runs master_type failover.
func (m *Minion) failover() bool { return m.c.MasterType == MasterTypeFailover }

// shuffleMasters applies random_master (or master_shuffle): the list is
// shuffled, except that with master_failback the first master stays
// first, as eval_master does.
func shuffleMasters(c *config.Minion, l []masterEntry) {
	if !(c.RandomMaster || c.MasterShuffle) || len(l) < 2 {
		return
	}
	rest := l
	if c.MasterType == MasterTypeFailover && c.MasterFailback {
		rest = l[1:]
	}
	rand.Shuffle(len(rest), func(i, j int) { rest[i], rest[j] = rest[j], rest[i] })
}

// current is the master the minion talks to now.
func (m *Minion) current() masterEntry { return m.masters[int(m.masterIdx.Load())%len(m.masters)] }

// masterAddr is the current master's address with port, its own port
// when the entry names one and port is the request port.
func (m *Minion) masterAddr(port int) string {
	e := m.current()
	if port == m.c.MasterPort {
		port = e.port
	}
	return net.JoinHostPort(e.host, strconv.Itoa(port))
}

// setMaster makes entry i the current master.
func (m *Minion) setMaster(i int) {
	m.masterIdx.Store(int64(i % len(m.masters)))
	m.req.SetAddr(m.masterAddr(m.c.MasterPort))
}

// nextMaster moves to the next address of a master list after a failed
// sign-in, as master_type failover does; a single master stays put.
func (m *Minion) nextMaster() {
	if len(m.masters) < 2 {
		return
	}
	m.setMaster(int(m.masterIdx.Load()) + 1)
	m.log.Info("trying the next master", "master", m.req.Address())
}

// resolve is resolve_dns for the current master: a name that does not
// resolve is retried every retry_dns (up to retry_dns_count times) for
// a single master; a failover minion has retry_dns 0 (Salt forces it,
// issue 21082) and moves on to the next master at once.
func (m *Minion) resolve(ctx context.Context) error {
	host := m.current().host
	if _, err := netip.ParseAddr(host); err == nil {
		return nil
	}
	wait := m.c.RetryDNS
	if m.failover() {
		wait = 0
	}
	for n := 0; ; n++ {
		lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_, err := net.DefaultResolver.LookupHost(lctx, host)
		cancel()
		if err == nil {
			return nil
		}
		if wait <= 0 || (m.c.RetryDNSCount > 0 && n >= m.c.RetryDNSCount) || ctx.Err() != nil {
			return fmt.Errorf("master hostname %q not found: %w", host, err)
		}
		m.log.Error("Master hostname not found, retrying", "master", host, "retry_in", wait.String(), "error", err.Error())
		if err := sleep(ctx, wait); err != nil {
			return err
		}
	}
}

// signInCurrent resolves the current master's name, then signs in.
func (m *Minion) signInCurrent(ctx context.Context) (*authState, error) {
	if err := m.resolve(ctx); err != nil {
		return nil, fmt.Errorf("sign in: %w", err)
	}
	return m.signIn(ctx)
}

// signInTimeout is how long one sign-in waits for the master's answer:
// auth_tries × auth_timeout, Salt's budget for the sign-in request
// (salt/crypt.py AsyncAuth.sign_in sends it auth_tries times, each
// waiting auth_timeout). Brine sends it once and waits the whole
// budget, so a busy master is not handed the same RSA work again. A
// failover minion has auth_tries 1 (eval_master sets 0, one try), so a
// dead master costs one auth_timeout before the next is tried.
func (m *Minion) signInTimeout() time.Duration {
	tries := max(m.c.AuthTries, 1)
	if m.failover() {
		tries = 1
	}
	t := m.c.AuthTimeout
	if t <= 0 {
		t = 5 * time.Second
	}
	return time.Duration(tries) * t
}

// roundsDone reports whether failed consecutive failed sign-ins have
// gone through the master list master_tries times (-1: never).
func (m *Minion) roundsDone(failed int) bool {
	tries := m.c.MasterTries
	if tries < 0 {
		return false
	}
	return failed%(max(tries, 1)*len(m.masters)) == 0
}

// queueDir is where undelivered returns are kept: one directory per
// master address and port (a failover minion has one queue for the
// list), none for a minion without a disk.
func (m *Minion) queueDir() string {
	if m.o.NoDisk || m.c.CacheDir == "" {
		return ""
	}
	name := "failover"
	if !m.failover() {
		name = m.current().String()
	}
	name = strings.NewReplacer(":", "_", "/", "_", "[", "", "]", "").Replace(name)
	return filepath.Join(m.c.CacheDir, "return_queue", name)
}
