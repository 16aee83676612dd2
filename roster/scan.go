package roster

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"
)

func init() { Register("scan", openScan) }

// Scan defaults (salt/config/__init__.py DEFAULT_MASTER_OPTS).
const (
	DefaultScanPorts   = "22"
	DefaultScanTimeout = 10 * time.Millisecond
	// DefaultScanMaxHosts bounds the addresses one target may cover (a
	// /16 of IPv4); Salt has no bound and would walk an IPv6 /64.
	DefaultScanMaxHosts = 65536
	// scanConcurrency is how many connection attempts are in flight.
	scanConcurrency = 256
)

// ErrScanTooLarge is returned for a network with more addresses than
// Config.ScanMaxHosts.
var ErrScanTooLarge = errors.New("network too large to scan")

// Scan is the scan roster (salt/roster/scan.py): the target is an IP
// address or a network in CIDR form (a comma list with -L), and every
// address where a TCP connection to one of ssh_scan_ports (--scan-ports,
// default "22") succeeds within ssh_scan_timeout (--scan-timeout, default
// 0.01 s) becomes a target whose ID and host are the address and whose
// port is the open port (the last open one in ssh_scan_ports order, as
// Salt's dict.update leaves it), over roster_defaults.
//
// Differences from Salt: addresses with no open port are left out (Salt
// returns every address of the network, open or not); a network with
// host bits set (10.0.0.5/24) is an error instead of nothing; networks
// larger than ScanMaxHosts are refused; up to 256 connections are tried
// at once. A target that is neither an address nor a network matches
// nothing, so salt-ssh's ad-hoc fallback still applies.
type Scan struct {
	cfg   Config
	ports []int
	// Dial connects; nil means a net.Dialer with the scan timeout.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

func openScan(_ context.Context, cfg Config) (Roster, error) { return NewScan(cfg) }

// NewScan checks cfg's scan settings.
func NewScan(cfg Config) (*Scan, error) {
	ports, err := ParseScanPorts(cfg.ScanPorts)
	if err != nil {
		return nil, err
	}
	if cfg.ScanTimeout <= 0 {
		cfg.ScanTimeout = DefaultScanTimeout
	}
	if cfg.ScanMaxHosts <= 0 {
		cfg.ScanMaxHosts = DefaultScanMaxHosts
	}
	return &Scan{cfg: cfg, ports: ports}, nil
}

// ParseScanPorts reads ssh_scan_ports, a comma list of ports ("" is
// "22").
func ParseScanPorts(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		s = DefaultScanPorts
	}
	var out []int
	for _, p := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("ssh_scan_ports: %q is not a port number", p)
		}
		out = append(out, n)
	}
	return out, nil
}

// Targets scans the addresses tgt names.
func (s *Scan) Targets(ctx context.Context, tgt, tgtType string) ([]Target, error) {
	items := []string{tgt}
	if tgtType == TgtList {
		items = strings.Split(tgt, ",")
	}
	var addrs []netip.Addr
	for _, it := range items {
		a, err := s.expand(strings.TrimSpace(it), s.cfg.ScanMaxHosts-len(addrs))
		if err != nil {
			return nil, err
		}
		addrs = append(addrs, a...)
	}
	if len(addrs) == 0 {
		return nil, nil
	}
	open := s.scan(ctx, addrs)
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("scan %s: %w", tgt, context.Cause(ctx))
	}
	defaults, errs := defaultFields(s.cfg.RosterDefaults, s.cfg.Options)
	if len(errs) > 0 {
		return nil, errs[0]
	}
	var out []Target
	for i, a := range addrs {
		if open[i] == 0 {
			continue
		}
		id := a.String()
		own := []field{{key: "host", val: id}, {key: "port", val: open[i]}}
		t, _ := buildTarget(id, mergeFields(defaults, own), s.cfg.Options)
		out = append(out, t)
	}
	return out, nil
}

// expand turns one address or network into addresses, as Python's
// ip_address / ip_network(...).hosts() do.
func (s *Scan) expand(item string, room int) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(item); err == nil {
		return []netip.Addr{a.Unmap()}, nil
	}
	p, err := netip.ParsePrefix(item)
	if err != nil {
		return nil, nil // not an address: Salt's scan roster matches nothing
	}
	if p.Masked() != p {
		return nil, fmt.Errorf("scan %s: has host bits set (the network is %s)", item, p.Masked())
	}
	bits := p.Addr().BitLen() - p.Bits()
	size := new(big.Int).Lsh(big.NewInt(1), uint(bits))
	if size.Cmp(big.NewInt(int64(room))) > 0 {
		return nil, fmt.Errorf("scan %s: %w (%s addresses, at most %d)", item, ErrScanTooLarge, size, s.cfg.ScanMaxHosts)
	}
	n := int(size.Int64())
	out := make([]netip.Addr, 0, n)
	for a, i := p.Addr(), 0; i < n; a, i = a.Next(), i+1 {
		out = append(out, a)
	}
	switch {
	case p.Addr().Is4() && bits >= 2:
		out = out[1 : len(out)-1] // network and broadcast
	case p.Addr().Is6() && bits >= 2:
		out = out[1:] // the Subnet-Router anycast address
	}
	return out, nil
}

// scan returns, for each address, the last port of s.ports that accepted
// a connection, or 0.
func (s *Scan) scan(ctx context.Context, addrs []netip.Addr) []int {
	dial := s.Dial
	if dial == nil {
		d := &net.Dialer{Timeout: s.cfg.ScanTimeout}
		dial = d.DialContext
	}
	open := make([]int, len(addrs))
	hits := make([][]bool, len(addrs))
	sem := make(chan struct{}, scanConcurrency)
	var wg sync.WaitGroup
	for i, a := range addrs {
		hits[i] = make([]bool, len(s.ports))
		for j, port := range s.ports {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				wg.Wait()
				return open
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				hits[i][j] = probe(ctx, dial, s.cfg.ScanTimeout, netip.AddrPortFrom(a, uint16(port)).String())
			}()
		}
	}
	wg.Wait()
	for i := range addrs {
		for j, port := range s.ports {
			if hits[i][j] {
				open[i] = port
			}
		}
	}
	return open
}

// probe reports whether a TCP connection to addr succeeds in time.
func probe(ctx context.Context, dial func(context.Context, string, string) (net.Conn, error), timeout time.Duration, addr string) bool {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c, err := dial(ctx, "tcp", addr)
	if err != nil {
		return false
	}
	_ = c.Close()
	return true
}
