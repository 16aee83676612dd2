package version

import (
	"strconv"
	"testing"
)

func TestThinMarkerCarriesProtocol(t *testing.T) {
	if want := "\x00BRINE-THIN-PROTOCOL:" + strconv.Itoa(ThinProtocol) + "\x00"; ThinMarker != want {
		t.Errorf("ThinMarker = %q, want %q", ThinMarker, want)
	}
}
