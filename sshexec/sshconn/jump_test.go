package sshconn

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/crypto/ssh"

	"github.com/brinesalt/brine/internal/testsupport/sshtest"
)

func TestParseProxyJump(t *testing.T) {
	tests := []struct {
		in      string
		want    []JumpHost
		wantErr bool
	}{
		{"", nil, false},
		{"none", nil, false},
		{"bastion", []JumpHost{{Host: "bastion"}}, false},
		{"user@bastion:2222", []JumpHost{{User: "user", Host: "bastion", Port: 2222}}, false},
		{"a, ops@b:22", []JumpHost{{Host: "a"}, {User: "ops", Host: "b", Port: 22}}, false},
		{"[::1]:2200", []JumpHost{{Host: "::1", Port: 2200}}, false},
		{"u@[fe80::1]", []JumpHost{{User: "u", Host: "fe80::1"}}, false},
		{"ssh://u@h:2022", []JumpHost{{User: "u", Host: "h", Port: 2022}}, false},
		{"a,,b", nil, true},
		{"h:99999", nil, true},
		{"@h", nil, true},
		{"h:x", nil, true},
	}
	for _, tc := range tests {
		got, err := ParseProxyJump(tc.in)
		if (err != nil) != tc.wantErr {
			t.Errorf("ParseProxyJump(%q) error = %v, want error %v", tc.in, err, tc.wantErr)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("ParseProxyJump(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
	if s := (JumpHost{User: "u", Host: "::1", Port: 2}).String(); s != "u@[::1]:2" {
		t.Errorf("String = %q", s)
	}
}

// jumpFixture is a chain of test servers that all trust one key, with a
// known_hosts file holding every host key.
func jumpChain(t *testing.T, n int, opts sshtest.Options) (*fixture, []*sshtest.Server) {
	t.Helper()
	target := newFixture(t, opts)
	var hops []*sshtest.Server
	known := target.srv.KnownHostsLine()
	for range n {
		o := opts
		o.AllowForward = true
		o.AuthorizedKeys = []ssh.PublicKey{target.cfg.Signers[0].PublicKey()}
		s := sshtest.New(t, o)
		hops = append(hops, s)
		known += s.KnownHostsLine()
	}
	writeFile(t, target.cfg.KnownHostsFile, known)
	for _, s := range hops {
		hop := target.cfg
		hop.Port = s.Port()
		target.cfg.Jumps = append(target.cfg.Jumps, hop)
	}
	return target, hops
}

func TestProxyJump(t *testing.T) {
	for _, n := range []int{1, 2} {
		t.Run(strings.Repeat("hop", n), func(t *testing.T) {
			f, hops := jumpChain(t, n, sshtest.Options{})
			c := f.dial(t)
			out, err := c.Output(context.Background(), "echo through", nil)
			if err != nil || string(out) != "through\n" {
				t.Fatalf("Output = %q, %v", out, err)
			}
			for i, h := range hops {
				if st := h.Stats(); st.Forwards != 1 || st.Sessions != 0 {
					t.Errorf("hop %d stats = %+v, want one forward and no session", i, st)
				}
			}
			c.Close()
		})
	}
}

func TestProxyJumpErrors(t *testing.T) {
	t.Run("loop", func(t *testing.T) {
		f, _ := jumpChain(t, 2, sshtest.Options{})
		f.cfg.Jumps[1] = f.cfg.Jumps[0]
		_, err := Dial(context.Background(), f.cfg)
		if !errors.Is(err, ErrJumpLoop) {
			t.Fatalf("Dial error = %v, want ErrJumpLoop", err)
		}
	})
	t.Run("target is a hop", func(t *testing.T) {
		f, _ := jumpChain(t, 1, sshtest.Options{})
		f.cfg.Jumps = append(f.cfg.Jumps, f.cfg)
		f.cfg.Jumps[1].Jumps = nil
		if _, err := Dial(context.Background(), f.cfg); !errors.Is(err, ErrJumpLoop) {
			t.Fatalf("Dial error = %v, want ErrJumpLoop", err)
		}
	})
	t.Run("bastion down", func(t *testing.T) {
		f, hops := jumpChain(t, 2, sshtest.Options{})
		hops[1].Close()
		_, err := Dial(context.Background(), f.cfg)
		var je *JumpError
		if !errors.As(err, &je) || je.Index != 1 || !errors.Is(err, ErrConnect) {
			t.Fatalf("Dial error = %v, want *JumpError at hop 1 matching ErrConnect", err)
		}
		if !strings.Contains(err.Error(), net.JoinHostPort("127.0.0.1", strconv.Itoa(hops[1].Port()))) {
			t.Errorf("error does not name the bastion: %v", err)
		}
	})
	t.Run("bastion host key unknown", func(t *testing.T) {
		f, _ := jumpChain(t, 1, sshtest.Options{})
		writeFile(t, f.cfg.KnownHostsFile, f.srv.KnownHostsLine())
		f.cfg.Jumps[0].KnownHostsFile = f.cfg.KnownHostsFile
		_, err := Dial(context.Background(), f.cfg)
		var je *JumpError
		if !errors.As(err, &je) || !errors.Is(err, ErrHostKeyUnknown) {
			t.Fatalf("Dial error = %v, want *JumpError matching ErrHostKeyUnknown", err)
		}
	})
	t.Run("target unreachable from bastion", func(t *testing.T) {
		f, _ := jumpChain(t, 1, sshtest.Options{})
		ln, _ := net.Listen("tcp", "127.0.0.1:0")
		f.cfg.Port = ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		_, err := Dial(context.Background(), f.cfg)
		var je *JumpError
		if errors.As(err, &je) || !errors.Is(err, ErrConnect) {
			t.Fatalf("Dial error = %v, want ErrConnect for the target itself", err)
		}
	})
}

func FuzzParseProxyJump(f *testing.F) {
	for _, s := range []string{"a", "u@h:22,b", "[::1]:2", "ssh://u@h:1", "none", "a,,b", "@:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		hops, err := ParseProxyJump(s)
		if err != nil {
			return
		}
		for _, h := range hops {
			if h.Host == "" || h.Port < 0 || h.Port > 65535 {
				t.Fatalf("ParseProxyJump(%q) = %+v", s, hops)
			}
			again, err := ParseProxyJump(h.String())
			if err != nil || len(again) != 1 || again[0] != h {
				t.Fatalf("round trip of %+v: %+v, %v", h, again, err)
			}
		}
	})
}
