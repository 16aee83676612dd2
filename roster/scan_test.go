package roster

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fakeDial accepts connections to the listed host:port addresses.
func fakeDial(open ...string) func(context.Context, string, string) (net.Conn, error) {
	return func(_ context.Context, _, addr string) (net.Conn, error) {
		for _, o := range open {
			if o == addr {
				c, s := net.Pipe()
				_ = s.Close()
				return c, nil
			}
		}
		return nil, errors.New("refused")
	}
}

func TestScanTargets(t *testing.T) {
	tests := []struct {
		tgt, typ, ports string
		open            []string
		want            []string // id host:port
	}{
		{"10.0.0.0/29", "glob", "", []string{"10.0.0.1:22", "10.0.0.6:22", "10.0.0.0:22", "10.0.0.7:22"}, []string{"10.0.0.1 10.0.0.1:22", "10.0.0.6 10.0.0.6:22"}},
		{"10.0.0.5", "glob", "22,2222", []string{"10.0.0.5:22", "10.0.0.5:2222"}, []string{"10.0.0.5 10.0.0.5:2222"}},
		{"10.0.0.5", "glob", "2222,22", []string{"10.0.0.5:22", "10.0.0.5:2222"}, []string{"10.0.0.5 10.0.0.5:22"}},
		{"10.0.0.5,10.0.0.9/32", "list", "", []string{"10.0.0.5:22", "10.0.0.9:22"}, []string{"10.0.0.5 10.0.0.5:22", "10.0.0.9 10.0.0.9:22"}},
		{"10.0.0.4/31", "glob", "", []string{"10.0.0.4:22", "10.0.0.5:22"}, []string{"10.0.0.4 10.0.0.4:22", "10.0.0.5 10.0.0.5:22"}},
		{"fd00::/126", "glob", "", []string{"[fd00::]:22", "[fd00::1]:22"}, []string{"fd00::1 [fd00::1]:22"}},
		{"web1", "glob", "", nil, nil},
		{"10.0.0.5", "glob", "", nil, nil},
	}
	for _, tc := range tests {
		cfg := testConfig()
		cfg.ScanPorts = tc.ports
		s, err := NewScan(cfg)
		if err != nil {
			t.Fatal(err)
		}
		s.Dial = fakeDial(tc.open...)
		ts, err := s.Targets(context.Background(), tc.tgt, tc.typ)
		if err != nil {
			t.Fatalf("%s: %v", tc.tgt, err)
		}
		var got []string
		for _, x := range ts {
			got = append(got, x.ID+" "+x.Addr())
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", tc.tgt, d)
		}
	}
}

func TestScanErrors(t *testing.T) {
	s, err := NewScan(testConfig())
	if err != nil {
		t.Fatal(err)
	}
	s.Dial = fakeDial()
	if _, err := s.Targets(context.Background(), "10.0.0.0/8", "glob"); !errors.Is(err, ErrScanTooLarge) {
		t.Errorf("/8: got %v, want ErrScanTooLarge", err)
	}
	if _, err := s.Targets(context.Background(), "fd00::/64", "glob"); !errors.Is(err, ErrScanTooLarge) {
		t.Errorf("v6 /64: got %v, want ErrScanTooLarge", err)
	}
	if _, err := s.Targets(context.Background(), "10.0.0.5/24", "glob"); err == nil || !strings.Contains(err.Error(), "10.0.0.0/24") {
		t.Errorf("host bits: got %v", err)
	}
	for _, p := range []string{"x", "0", "22,", "70000"} {
		cfg := testConfig()
		cfg.ScanPorts = p
		if _, err := NewScan(cfg); err == nil {
			t.Errorf("ports %q: no error", p)
		}
	}
}
