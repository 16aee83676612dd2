package testhosts_test

import (
	"bufio"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/brinesalt/brine/internal/testsupport/testhosts"
)

func TestBehindHostAndHostCert(t *testing.T) {
	c := testhosts.New(t, 4,
		testhosts.WithHost("host2", testhosts.HostOptions{BehindHost: "host1", HostCert: true}),
		testhosts.WithHost("host3", testhosts.HostOptions{BehindHost: "host2"}),
		testhosts.WithHost("host4", testhosts.HostOptions{HostCert: true})) // BehindHost: New skips without netns
	h2, _ := c.Host("host2")
	h3, _ := c.Host("host3")

	// The controller has no way to host2 or host3.
	for _, h := range []testhosts.Host{h2, h3} {
		if conn, err := net.DialTimeout("tcp", h.Addr, time.Second); err == nil {
			conn.Close()
			t.Errorf("controller reached %s directly", h.ID)
		}
	}
	// host1 reaches host2 but not host3; host2 reaches host3.
	c1 := dial(t, c, "host1", c.User())
	if !bannerVia(c1, h2.Addr) {
		t.Error("host1 cannot reach host2")
	}
	if bannerVia(c1, h3.Addr) {
		t.Error("host1 reached host3, which is behind host2")
	}
	conn2, err := c1.Dial("tcp", h2.Addr)
	if err != nil {
		t.Fatal(err)
	}
	cc, chans, reqs, err := ssh.NewClientConn(conn2, h2.Addr, withCA(c, c.ClientConfig(c.User())))
	if err != nil {
		t.Fatalf("ssh to host2 through host1 with the host CA: %v", err)
	}
	c2 := ssh.NewClient(cc, chans, reqs)
	defer c2.Close()
	if !bannerVia(c2, h3.Addr) {
		t.Error("host2 cannot reach host3")
	}
	if got := c.ProxyJump("host3"); got != c.User()+"@"+mustHost(t, c, "host1").IP+","+c.User()+"@"+h2.IP {
		t.Errorf("ProxyJump(host3) = %q", got)
	}

	// host4 presents a certificate signed by the host CA.
	h4, _ := c.Host("host4")
	cl, err := ssh.Dial("tcp", h4.Addr, withCA(c, c.ClientConfig(c.User())))
	if err != nil {
		t.Fatalf("ssh to host4 with the host CA: %v", err)
	}
	cl.Close()
}

func TestBehindHostErrors(t *testing.T) {
	for _, cfg := range []testhosts.Config{
		{N: 2, Hosts: map[string]testhosts.HostOptions{"host1": {BehindHost: "host2"}, "host2": {BehindHost: "host1"}}},
		{N: 1, Hosts: map[string]testhosts.HostOptions{"host1": {BehindHost: "host9"}}},
	} {
		if c, err := testhosts.Start(t.Context(), cfg); err == nil {
			c.Close(t.Context())
			t.Errorf("Start(%+v) succeeded", cfg.Hosts)
		}
	}
}

// withCA trusts only certificates from the cluster's host CA.
func withCA(c *testhosts.Cluster, cfg *ssh.ClientConfig) *ssh.ClientConfig {
	ca := c.HostCA()
	checker := &ssh.CertChecker{
		IsHostAuthority: func(auth ssh.PublicKey, _ string) bool {
			return ca != nil && string(auth.Marshal()) == string(ca.Marshal())
		},
		HostKeyFallback: func(string, net.Addr, ssh.PublicKey) error { return errors.New("not a certificate") },
	}
	cfg.HostKeyCallback = checker.CheckHostKey
	cfg.HostKeyAlgorithms = []string{ssh.CertAlgoED25519v01}
	return cfg
}

// bannerVia reports whether cl can open a TCP connection to addr that
// answers with an SSH banner.
func bannerVia(cl *ssh.Client, addr string) bool {
	conn, err := cl.Dial("tcp", addr)
	if err != nil {
		return false
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(3 * time.Second))
	s, err := bufio.NewReader(conn).ReadString('\n')
	return err == nil && strings.HasPrefix(s, "SSH-")
}

func mustHost(t *testing.T, c *testhosts.Cluster, id string) testhosts.Host {
	h, err := c.Host(id)
	if err != nil {
		t.Fatal(err)
	}
	return h
}
