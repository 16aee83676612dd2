package winservice

import (
	"context"
	"testing"
)

// TestWindowsSessionInstall registers and removes the current user's Run
// key entry; no salt-minion service is installed here, so there is none
// to disable.
func TestWindowsSessionInstall(t *testing.T) {
	t.Cleanup(func() { SessionRemove() })
	exe := `C:\Program Files\Salt\salt-minion.exe`
	if err := SessionInstall(context.Background(), exe, []string{"-c", `C:\salt conf`}); err != nil {
		t.Fatal(err)
	}
	if got, want := SessionCommand(), `"C:\Program Files\Salt\salt-minion.exe" -c "C:\salt conf"`; got != want {
		t.Errorf("Run key = %q, want %q", got, want)
	}
	if err := SessionRemove(); err != nil {
		t.Fatal(err)
	}
	if got := SessionCommand(); got != "" {
		t.Errorf("after remove, Run key = %q", got)
	}
}
