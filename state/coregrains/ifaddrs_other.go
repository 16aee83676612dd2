//go:build !linux

package coregrains

import "errors"

// addrsByIndex has no one-dump implementation here: interfaces falls
// back to net.Interface.Addrs per interface.
func addrsByIndex() (map[int][]ifAddr, error) {
	return nil, errors.New("no netlink address dump on this platform")
}
