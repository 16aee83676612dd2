package sshconn

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/brinesalt/brine/internal/logattr"
)

// RemoteForward is one OpenSSH -R forward: the host listens on
// BindAddr:Port and every connection made there is carried back over the
// SSH connection and connected, from the controller, to Host:HostPort.
type RemoteForward struct {
	// BindAddr is the address the host listens on; "" means loopback
	// (OpenSSH sends "localhost"). The server's GatewayPorts decides
	// whether any other address is honoured.
	BindAddr string
	// Port is the host's listening port; 0 lets the server choose.
	Port int
	// Host and HostPort are what the controller connects to.
	Host     string
	HostPort int
}

// String is the forward in -R syntax.
func (f RemoteForward) String() string {
	s := strconv.Itoa(f.Port) + ":" + bracket(f.Host) + ":" + strconv.Itoa(f.HostPort)
	if f.BindAddr != "" {
		s = bracket(f.BindAddr) + ":" + s
	}
	return s
}

func bracket(h string) string {
	if strings.Contains(h, ":") {
		return "[" + h + "]"
	}
	return h
}

// ParseRemoteForwards reads Salt's remote_port_forwards: a comma list of
// OpenSSH -R specifications (salt/client/ssh/shell.py turns each item into
// "-R item"), each "[bind_address:]port:host:hostport", with IPv6
// addresses in brackets. OpenSSH's other -R forms (Unix sockets, the
// reverse SOCKS proxy "-R port") are refused, not ignored.
func ParseRemoteForwards(list string) ([]RemoteForward, error) {
	var out []RemoteForward
	for _, item := range strings.Split(list, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		f, err := parseRemoteForward(item)
		if err != nil {
			return nil, fmt.Errorf("remote port forward %q: %w", item, err)
		}
		out = append(out, f)
	}
	return out, nil
}

func parseRemoteForward(item string) (RemoteForward, error) {
	parts, err := splitForward(item)
	if err != nil {
		return RemoteForward{}, err
	}
	var f RemoteForward
	if strings.ContainsFunc(item, unicode.IsSpace) {
		return f, errors.New("spaces inside a forward")
	}
	if strings.Contains(item, "/") {
		return f, errors.New("unix socket forwards are not supported; want [bind_address:]port:host:hostport")
	}
	switch len(parts) {
	case 3:
	case 4:
		f.BindAddr, parts = parts[0], parts[1:]
	case 1:
		return f, errors.New("a reverse SOCKS proxy (-R port) is not supported; want [bind_address:]port:host:hostport")
	default:
		return f, errors.New("want [bind_address:]port:host:hostport")
	}
	if f.Port, err = forwardPort(parts[0], true); err != nil {
		return f, err
	}
	if f.HostPort, err = forwardPort(parts[2], false); err != nil {
		return f, err
	}
	if f.Host = parts[1]; f.Host == "" {
		return f, errors.New("no host to connect to")
	}
	if f.BindAddr == "*" {
		f.BindAddr = "0.0.0.0" // OpenSSH: every address, if GatewayPorts allows
	}
	return f, nil
}

// splitForward splits at colons outside brackets, removing the brackets.
func splitForward(s string) ([]string, error) {
	var parts []string
	var cur strings.Builder
	inBracket, bracketed := false, false
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; {
		case ch == '[' && !inBracket && cur.Len() == 0 && !bracketed:
			inBracket = true
		case ch == ']' && inBracket:
			inBracket, bracketed = false, true
		case ch == ':' && !inBracket:
			parts = append(parts, cur.String())
			cur.Reset()
			bracketed = false
		case bracketed, ch == '[', ch == ']':
			return nil, errors.New("unbalanced [ ] around an address")
		default:
			cur.WriteByte(ch)
		}
	}
	if inBracket {
		return nil, errors.New("unbalanced [ ] around an address")
	}
	return append(parts, cur.String()), nil
}

func forwardPort(s string, zeroOK bool) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 65535 || (n == 0 && !zeroOK) {
		return 0, fmt.Errorf("bad port %q", s)
	}
	return n, nil
}

// forwardDialTimeout bounds the controller's connection to a forward's
// destination when the Conn has no connect timeout.
const forwardDialTimeout = 30 * time.Second

// startRemoteForwards asks the server to listen for each forward. As
// OpenSSH does without ExitOnForwardFailure, a forward the server refuses
// (port in use, forwarding disabled) is a warning and the connection goes
// on without it. Listeners and the connections they carry end with the
// Conn.
func (c *Conn) startRemoteForwards(cfg *Config) {
	log := cfg.logger().With(LogKeyHost, c.addr)
	d := &net.Dialer{Timeout: cfg.Timeout}
	if d.Timeout <= 0 {
		d.Timeout = forwardDialTimeout
	}
	for _, f := range cfg.RemoteForwards {
		// x/crypto/ssh sends the bind address as an IP, so the default is
		// 127.0.0.1 where OpenSSH sends "localhost".
		l, err := c.client.Listen("tcp", net.JoinHostPort(firstNonEmpty(f.BindAddr, "127.0.0.1"), strconv.Itoa(f.Port)))
		if err != nil {
			log.Warn("remote port forwarding failed", "forward", f.String(), logattr.Err, err)
			continue
		}
		if f.Port == 0 {
			log.Info("allocated port for remote forward", "port", l.Addr().(*net.TCPAddr).Port, "forward", f.String())
		}
		log.Debug("remote port forward listening", "forward", f.String())
		c.fwd.Add(1)
		go c.serveForward(l, f, d, log)
	}
}

// serveForward connects each connection the host accepted on l to the
// forward's destination until the SSH connection ends.
func (c *Conn) serveForward(l net.Listener, f RemoteForward, d *net.Dialer, log *slog.Logger) {
	defer c.fwd.Done()
	c.fwd.Add(1)
	go func() {
		defer c.fwd.Done()
		<-c.done
		l.Close()
	}()
	dest := net.JoinHostPort(f.Host, strconv.Itoa(f.HostPort))
	for {
		remote, err := l.Accept()
		if err != nil {
			return
		}
		c.fwd.Add(1)
		go func() {
			defer c.fwd.Done()
			local, err := d.Dial("tcp", dest)
			if err != nil {
				log.Warn("remote port forward: connect to destination failed", "forward", f.String(), logattr.Err, err)
				remote.Close()
				return
			}
			splice(remote, local, c.done)
		}()
	}
}

// splice copies both ways, passing a half-close on as ssh -R does, until
// both directions end or done closes, then closes both sides.
func splice(a, b net.Conn, done <-chan struct{}) {
	finished := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	cp := func(dst, src net.Conn) {
		defer wg.Done()
		io.Copy(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		}
	}
	go cp(a, b)
	go cp(b, a)
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		select {
		case <-done:
		case <-finished:
		}
		a.Close()
		b.Close()
	}()
	wg.Wait()
	close(finished)
	<-closed
}
func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}
