package network

import (
	"context"
	"encoding/json"
	"net"
	"strconv"
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
)

func TestConnect(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	udpDone := make(chan struct{})
	go func() {
		defer close(udpDone)
		buf := make([]byte, 512)
		n, addr, err := pc.ReadFrom(buf)
		if err == nil {
			pc.WriteTo(buf[:n], addr)
		}
	}()
	closed, _ := net.Listen("tcp", "127.0.0.1:0")
	closedPort := closed.Addr().(*net.TCPAddr).Port
	closed.Close()

	env := newEnv()
	tests := []struct {
		args []any
		kw   *ordered.Map
		want string
	}{
		{[]any{"127.0.0.1", port}, nil, `{"result":true,"comment":"Successfully connected to 127.0.0.1 (127.0.0.1) on tcp port ` + strconv.Itoa(port) + `"}`},
		{[]any{"127.0.0.1", closedPort}, ordered.FromPairs("timeout", 2), `{"result":false,"comment":"Unable to connect to 127.0.0.1 (127.0.0.1) on tcp port ` + strconv.Itoa(closedPort) + `"}`},
		{[]any{"127.0.0.1", pc.LocalAddr().(*net.UDPAddr).Port}, ordered.FromPairs("proto", "udp", "family", "ipv4"),
			`{"result":true,"comment":"Successfully connected to 127.0.0.1 (127.0.0.1) on udp port ` + strconv.Itoa(pc.LocalAddr().(*net.UDPAddr).Port) + `"}`},
		{[]any{"127.0.0.1"}, nil, `{"result":false,"comment":"Required argument, port, is missing."}`},
	}
	for _, tt := range tests {
		got, err := env.Run(context.Background(), "network.connect", tt.args, tt.kw)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(got)
		if string(b) != tt.want {
			t.Errorf("connect %v = %s, want %s", tt.args, b, tt.want)
		}
	}
	ln.Close()
	pc.Close()
	<-done
	<-udpDone
}
