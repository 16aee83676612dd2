//go:build !linux

package grains

import (
	"errors"
	"net/netip"
)

// addrsByIndex has no one-dump implementation here: interfaces falls
// back to net.Interface.Addrs per interface.
func addrsByIndex() (map[int][]netip.Addr, error) {
	return nil, errors.New("no netlink address dump on this platform")
}
