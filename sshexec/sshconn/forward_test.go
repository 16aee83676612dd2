package sshconn

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseRemoteForwards(t *testing.T) {
	cases := []struct {
		in   string
		want []RemoteForward
		err  string
	}{
		{in: "8080:localhost:80", want: []RemoteForward{{Port: 8080, Host: "localhost", HostPort: 80}}},
		{in: "8080:localhost:80, 127.0.0.1:9000:10.0.0.1:9001", want: []RemoteForward{
			{Port: 8080, Host: "localhost", HostPort: 80},
			{BindAddr: "127.0.0.1", Port: 9000, Host: "10.0.0.1", HostPort: 9001}}},
		{in: "[::1]:8080:[fd00::5]:443", want: []RemoteForward{{BindAddr: "::1", Port: 8080, Host: "fd00::5", HostPort: 443}}},
		{in: "*:8080:db:5432", want: []RemoteForward{{BindAddr: "0.0.0.0", Port: 8080, Host: "db", HostPort: 5432}}},
		{in: "0:localhost:80", want: []RemoteForward{{Port: 0, Host: "localhost", HostPort: 80}}},
		{in: "", want: nil},
		{in: "8080", err: "reverse SOCKS"},
		{in: "/tmp/remote.sock:/tmp/local.sock", err: "unix socket"},
		{in: "8080:/tmp/local.sock", err: "unix socket"},
		{in: "8080:localhost", err: "want [bind_address:]port:host:hostport"},
		{in: "x:localhost:80", err: `bad port "x"`},
		{in: "8080:localhost:0", err: `bad port "0"`},
		{in: "8080:localhost:70000", err: `bad port "70000"`},
		{in: "8080::80", err: "no host"},
		{in: "[::1:8080:h:80", err: "unbalanced"},
		{in: "[::1]x:8080:h:80", err: "unbalanced"},
		{in: "a:b:c:d:e", err: "want [bind_address:]port:host:hostport"},
	}
	for _, c := range cases {
		got, err := ParseRemoteForwards(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), c.in) {
				t.Errorf("%q: error %v, want one naming the item and saying %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%q (-want +got):\n%s", c.in, diff)
		}
		for i, f := range got {
			if back, err := ParseRemoteForwards(f.String()); err != nil || len(back) != 1 || back[0] != f {
				t.Errorf("%q: item %d does not round-trip through String %q: %v %v", c.in, i, f.String(), back, err)
			}
		}
	}
}

// FuzzParseRemoteForwards: remote_port_forwards comes from rosters and the
// command line; the parser never panics and what it accepts round-trips.
func FuzzParseRemoteForwards(f *testing.F) {
	for _, s := range []string{"8080:localhost:80", "[::1]:1:[::2]:2", "*:1:h:2,3:h:4", "[", "]:", "::::", "1:[a]:2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseRemoteForwards(s)
		if err != nil {
			return
		}
		for _, fw := range got {
			back, err := ParseRemoteForwards(fw.String())
			if err != nil || len(back) != 1 || back[0] != fw {
				t.Fatalf("%q: %+v does not round-trip through %q: %v %v", s, fw, fw.String(), back, err)
			}
		}
	})
}
