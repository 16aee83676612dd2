package target

import (
	"errors"
	"net/netip"
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
)

func TestIPCIDR(t *testing.T) {
	tests := []struct {
		tgt  string
		want bool
	}{
		{"10.0.0.0/8", true},
		{"10.0.0.5", true},
		{"10.0.0.5/32", true},
		{"10.0.0.6", false},
		{"192.168.0.0/16", false},
		{"10.0.0.0/255.0.0.0", true},     // netmask
		{"10.0.0.0/0.255.255.255", true}, // hostmask
		{"0.0.0.0/0", true},
		{"2001:db8::/32", true},
		{"2001:db8::5", true},
		{"2001:DB8:0:0::5", true}, // compared in Python's canonical form
		{"fe80::/10", true},
		{"::1", true},
		{"::/0", true},
		{"2001:db9::/32", false},
	}
	m := testMinion("web1")
	for _, tt := range tests {
		t.Run(tt.tgt, func(t *testing.T) {
			got, err := Match(tt.tgt, IPCIDR, m, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("ipcidr %q = %v, want %v", tt.tgt, got, tt.want)
			}
		})
	}
}

func TestIPCIDRGrainShapes(t *testing.T) {
	tests := []struct {
		name   string
		grains *ordered.Map
		tgt    string
		want   bool
	}{
		{"no ipv6 grain", ordered.FromPairs("ipv4", []any{"10.0.0.5"}), "::1", false},
		{"zoned grain address in network", ordered.FromPairs("ipv6", []any{"fe80::1%eth0"}), "fe80::/10", true},
		{"scalar grain is a substring test", ordered.FromPairs("ipv4", "10.0.0.15"), "10.0.0.1", true},
		{"scalar grain in network", ordered.FromPairs("ipv4", "10.0.0.15"), "10.0.0.0/24", true},
		{"unparsable grain address skipped", ordered.FromPairs("ipv4", []any{"bogus", "10.0.0.1"}), "10.0.0.0/24", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Match(tt.tgt, IPCIDR, &Minion{Grains: tt.grains}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestIPCIDRErrors(t *testing.T) {
	for _, tgt := range []string{"10.0.0.1/8", "garbage", "10.0.0.0/33", "010.0.0.1", "10.0.0.0/255.0.255.0", "::/129", ""} {
		_, err := Compile(tgt, IPCIDR, Options{})
		var pe *PatternError
		if !errors.As(err, &pe) {
			t.Errorf("Compile(%q) error = %v, want a *PatternError", tgt, err)
		}
	}
}

func TestPyAddrString(t *testing.T) {
	tests := map[string]string{
		"2001:DB8:0:0:0:0:0:5": "2001:db8::5",
		"2001:db8:0:1:0:0:0:1": "2001:db8:0:1::1",
		"2001:0:0:1:0:0:0:1":   "2001:0:0:1::1",
		"1:0:2:3:4:5:6:7":      "1:0:2:3:4:5:6:7",
		"::":                   "::",
		"::1":                  "::1",
		"1::":                  "1::",
		"::ffff:1.2.3.4":       "::ffff:102:304", // Python 3.10, which Salt 3006 ships
		"fe80::1%eth0":         "fe80::1%eth0",
		"10.1.2.3":             "10.1.2.3",
	}
	for in, want := range tests {
		if got := pyAddrString(netip.MustParseAddr(in)); got != want {
			t.Errorf("pyAddrString(%s) = %s, want %s", in, got, want)
		}
	}
}
