package winsession

import (
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/windows"
	"golang.org/x/sys/windows/svc"
)

// Mode names how the minion runs: "service" when the Service Control
// Manager started it, otherwise "session".
func Mode() string {
	if IsService() {
		return "service"
	}
	return "session"
}

var (
	serviceOnce sync.Once
	isService   bool
)

// IsService reports whether this process was started by the Service
// Control Manager: svc.IsWindowsService (its parent is services.exe and
// it runs in Session 0), or a parent named services.exe in any session,
// which is how Wine's service manager starts services (it keeps them in
// the desktop's session).
func IsService() bool {
	serviceOnce.Do(func() {
		isService, _ = svc.IsWindowsService()
		if !isService {
			isService = strings.EqualFold(filepath.Base(parentImage()), "services.exe")
		}
	})
	return isService
}

// parentImage is the executable path of this process's parent, "" when
// it cannot be read.
func parentImage() string {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPPROCESS, 0)
	if err != nil {
		return ""
	}
	defer windows.CloseHandle(snap)
	self := windows.GetCurrentProcessId()
	var e windows.ProcessEntry32
	e.Size = uint32(unsafe.Sizeof(e))
	for err = windows.Process32First(snap, &e); err == nil; err = windows.Process32Next(snap, &e) {
		if e.ProcessID != self {
			continue
		}
		h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, e.ParentProcessID)
		if err != nil {
			return ""
		}
		defer windows.CloseHandle(h)
		buf := make([]uint16, windows.MAX_PATH)
		n := uint32(len(buf))
		if windows.QueryFullProcessImageName(h, 0, &buf[0], &n) != nil {
			return ""
		}
		return windows.UTF16ToString(buf[:n])
	}
	return ""
}

// SessionID is the Terminal Services session the process runs in (0
// for services).
func SessionID() uint32 {
	var id uint32
	if windows.ProcessIdToSessionId(windows.GetCurrentProcessId(), &id) != nil {
		return 0
	}
	return id
}

// IsGUIProgram reports whether the PE image at path is built for the
// Windows GUI subsystem (IMAGE_SUBSYSTEM_WINDOWS_GUI, 2), as notepad.exe
// is and cmd.exe is not.
func IsGUIProgram(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var dos [64]byte
	if _, err := io.ReadFull(f, dos[:]); err != nil || dos[0] != 'M' || dos[1] != 'Z' {
		return false
	}
	peOff := int64(binary.LittleEndian.Uint32(dos[60:]))
	// PE signature (4) + COFF header (20) + the optional header up to
	// Subsystem, at offset 68 in both PE32 and PE32+.
	var hdr [4 + 20 + 70]byte
	if _, err := f.ReadAt(hdr[:], peOff); err != nil || string(hdr[:4]) != "PE\x00\x00" {
		return false
	}
	return binary.LittleEndian.Uint16(hdr[24+68:]) == 2
}
