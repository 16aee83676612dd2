package coregrains

import (
	"encoding/binary"
	"syscall"
	"testing"
)

// TestAddrFlags checks that the secondary flag is read from ifa_flags
// and from IFA_FLAGS, which supersedes it.
func TestAddrFlags(t *testing.T) {
	flags32 := func(v uint32) syscall.NetlinkRouteAttr {
		b := make([]byte, 4)
		binary.NativeEndian.PutUint32(b, v)
		return syscall.NetlinkRouteAttr{Attr: syscall.RtAttr{Type: ifaFlags}, Value: b}
	}
	for _, tc := range []struct {
		name  string
		byte_ byte
		attrs []syscall.NetlinkRouteAttr
		want  uint32
	}{
		{"ifa_flags only", ifaFSecondary, nil, ifaFSecondary},
		{"IFA_FLAGS wins", 0x80, []syscall.NetlinkRouteAttr{flags32(0x81)}, 0x81},
		{"no flags", 0, nil, 0},
	} {
		if got := addrFlags(tc.byte_, tc.attrs); got != tc.want {
			t.Errorf("%s: addrFlags = %#x, want %#x", tc.name, got, tc.want)
		}
	}
}
