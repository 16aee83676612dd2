package network

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"net"
	"net/netip"
	"strconv"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
)

func init() {
	modules.Register(modules.Function{Name: "network.connect",
		Doc:  "Test a TCP (or proto=udp) connection to host:port with timeout (default 5) and family ipv4/ipv6; returns {result, comment}.",
		Spec: modules.Spec{Params: []modules.Param{req("host"), opt("port", nil)}, VarKw: true}, Fn: connect})
}

// connect is network.connect: one resolution, one connection attempt,
// Salt's comments.
func connect(ctx context.Context, c *modules.Call) (any, error) {
	ret := ordered.FromPairs("result", nil, "comment", "")
	if c.Arg("port") == nil {
		ret.Set("result", false)
		ret.Set("comment", "Required argument, port, is missing.")
		return ret, nil
	}
	host, port := c.Str("host"), c.Str("port")
	proto, _ := c.Kwargs.Value("proto").(string)
	if proto != "udp" {
		proto = "tcp"
	}
	timeout := 5 * time.Second
	switch t := c.Kwargs.Value("timeout").(type) {
	case int:
		timeout = time.Duration(t) * time.Second
	case float64:
		timeout = time.Duration(t * float64(time.Second))
	}
	address := host
	if _, err := netip.ParseAddr(host); err != nil {
		address = sanitizeHost(host)
	}
	network := proto
	switch c.Kwargs.Value("family") {
	case "ipv4":
		network += "4"
	case "ipv6":
		network += "6"
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip"+network[len(proto):], address)
	if err != nil || len(ips) == 0 {
		ret.Set("result", false)
		ret.Set("comment", "Unable to resolve host "+host+" on "+proto+" port "+port)
		return ret, nil
	}
	ip := ips[0].Unmap().String()
	var d net.Dialer
	conn, err := d.DialContext(ctx, network, net.JoinHostPort(ip, port))
	if err == nil && proto == "udp" {
		err = udpProbe(conn, timeout)
	}
	if conn != nil {
		conn.Close()
	}
	if err != nil {
		ret.Set("result", false)
		ret.Set("comment", "Unable to connect to "+host+" ("+ip+") on "+proto+" port "+port)
		return ret, nil
	}
	ret.Set("result", true)
	ret.Set("comment", "Successfully connected to "+host+" ("+ip+") on "+proto+" port "+port)
	return ret, nil
}

// udpProbe sends a datagram and waits for any answer, as Salt does.
func udpProbe(conn net.Conn, timeout time.Duration) error {
	sum := md5.Sum([]byte(strconv.FormatInt(time.Now().Unix(), 10)))
	if err := conn.SetDeadline(time.Now().Add(timeout)); err != nil {
		return err
	}
	if _, err := conn.Write([]byte(hex.EncodeToString(sum[:]))); err != nil {
		return err
	}
	buf := make([]byte, 255)
	_, err := conn.Read(buf)
	return err
}
