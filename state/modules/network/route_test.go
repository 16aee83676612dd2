package network

import (
	"context"
	"encoding/json"
	"os/exec"
	"testing"

	"github.com/brinesalt/brine/internal/testsupport/testhosts"
)

func TestParseRouteGet(t *testing.T) {
	tests := []struct{ in, want string }{
		{"8.8.8.8 via 192.0.2.1 dev eth0 src 192.0.2.2 uid 0 \n    cache \n",
			`{"destination":"8.8.8.8","gateway":"192.0.2.1","interface":"eth0","source":"192.0.2.2"}`},
		{"local 127.0.0.1 dev lo src 127.0.0.1 uid 0 \n    cache <local> \n",
			`{"destination":"8.8.8.8","gateway":null,"interface":"lo","source":"127.0.0.1"}`},
	}
	for _, tt := range tests {
		m, err := parseRouteGet("8.8.8.8", tt.in)
		b, _ := json.Marshal(m)
		if err != nil || string(b) != tt.want {
			t.Errorf("parseRouteGet(%q) = %s, %v", tt.in, b, err)
		}
	}
	if _, err := parseRouteGet("x", "garbage"); err == nil {
		t.Error("garbage parsed")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		testhosts.Skip(t, "no ip(8)")
	}
	got, err := newEnv().Run(context.Background(), "network.get_route", []any{"127.0.0.1"}, nil)
	if b, _ := json.Marshal(got); err != nil || string(b) != `{"destination":"127.0.0.1","gateway":null,"interface":"lo","source":"127.0.0.1"}` {
		t.Errorf("get_route 127.0.0.1 = %s, %v", b, err)
	}
}
