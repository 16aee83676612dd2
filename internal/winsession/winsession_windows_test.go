package winsession

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWindowsGUIProgram(t *testing.T) {
	sys := filepath.Join(os.Getenv("SystemRoot"), "system32")
	if !IsGUIProgram(filepath.Join(sys, "notepad.exe")) {
		t.Error("notepad.exe is not a GUI program")
	}
	if IsGUIProgram(filepath.Join(sys, "cmd.exe")) {
		t.Error("cmd.exe is a GUI program")
	}
	if IsGUIProgram(filepath.Join(sys, "brine-no-such-program.exe")) {
		t.Error("a missing file is a GUI program")
	}
	if Mode() != "session" {
		t.Errorf("Mode() = %q under go test, want session", Mode())
	}
}
