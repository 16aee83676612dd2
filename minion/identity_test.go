package minion

import (
	"context"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/config"
	"github.com/brinesalt/brine/internal/transport"
)

// TestRequestSocketHasNoIdentity has the minion sign in to a listener
// that only does the ZMTP handshake as a ROUTER: the request socket
// must announce an empty identity, as Salt's REQ socket does
// (salt/transport/zeromq.py sets ZMQ_IDENTITY on SUB only), so that
// salt-call can talk to the master beside the running minion of the
// same id.
func TestRequestSocketHasNoIdentity(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	peer := make(chan map[string]string, 1)
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		c, err := transport.Handshake(nc, transport.TypeROUTER, []byte("\x00r"), 0, 10*time.Second)
		if err != nil {
			peer <- nil
			return
		}
		peer <- c.Peer
	}()
	dir := t.TempDir()
	c := config.DefaultMinion(dir)
	c.ID, c.Masters, c.MasterPort = "web1", []string{ln.Addr().String()}, ln.Addr().(*net.TCPAddr).Port
	c.PKIDir, c.CacheDir = filepath.Join(dir, "pki"), filepath.Join(dir, "cache")
	m, err := New(Options{Config: c})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	var got map[string]string
	select {
	case got = <-peer:
	case <-ctx.Done():
	}
	cancel()
	<-done
	if got == nil {
		t.Fatal("no handshake from the minion's request socket")
	}
	if id, ok := got["Identity"]; ok && id != "" {
		t.Fatalf("request socket identity = %q, want none", id)
	}
	if got["Socket-Type"] != transport.TypeREQ {
		t.Fatalf("socket type %q", got["Socket-Type"])
	}
}
