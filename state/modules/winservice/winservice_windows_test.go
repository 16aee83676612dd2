package winservice

import (
	"testing"
)

// TestWindowsServiceInfo reads a service every Windows (and Wine) has,
// PlugPlay, through the SCM: its configuration and its running state.
func TestWindowsServiceInfo(t *testing.T) {
	info, err := Info("PlugPlay")
	if err != nil {
		t.Fatalf("Info(PlugPlay): %v", err)
	}
	if info.Value("Status") != "Running" || info.Value("BinaryPath") == "" || info.Value("StartType") == nil {
		t.Errorf("Info(PlugPlay) = %v", info)
	}
	if _, err := Info("brine-no-such-service"); err == nil {
		t.Error("Info of a missing service succeeded")
	}
}
