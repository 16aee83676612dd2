package beacons

import (
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
)

func TestNone(t *testing.T) {
	got, err := none(t.Context(), nil)
	m, ok := got.(*ordered.Map)
	if err != nil || !ok || m.Len() != 1 || m.Value("beacons").(*ordered.Map).Len() != 0 {
		t.Errorf("got %v, %v; want {'beacons': {}}", got, err)
	}
}
