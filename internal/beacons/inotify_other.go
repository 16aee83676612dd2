//go:build !linux

package beacons

import (
	"context"
	"errors"

	"github.com/brinesalt/brine/internal/ordered"
)

func init() { Register("inotify", func() Beacon { return inotifyBeacon{} }) }

// inotifyBeacon outside Linux: Salt's needs pyinotify, which is Linux
// only; the beacon reports that on every pass.
type inotifyBeacon struct{}

func (inotifyBeacon) Validate(config any) string { return validateInotify(config) }
func (inotifyBeacon) Close()                     {}
func (inotifyBeacon) Beacon(context.Context, *Env, []any) ([]*ordered.Map, error) {
	return nil, errors.New("inotify beacon: inotify is Linux only")
}
