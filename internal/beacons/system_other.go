//go:build !linux

package beacons

import "errors"

var errNotLinux = errors.New("not supported on this platform yet (Linux only)")

func readLoadAvg() ([]float64, error)         { return nil, errNotLinux }
func readMemPercent() (float64, error)        { return 0, errNotLinux }
func readMountPoints() ([]string, error)      { return nil, errNotLinux }
func readDiskPercent(string) (float64, error) { return 0, errNotLinux }
