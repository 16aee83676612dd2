package file

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/windows"
)

// statOf fills the stat fields as CPython's os.stat does on Windows
// (Modules/posixmodule.c attribute_data_to_stat): st_mode from the
// read-only attribute and the executable extensions, st_ino and st_nlink
// from GetFileInformationByHandle, st_ctime the creation time, uid and
// gid 0.
func statOf(p string, fi os.FileInfo) posixStat {
	st := posixStat{Size: fi.Size(), Nlink: 1, Mode: winMode(p, fi)}
	if d, ok := fi.Sys().(*syscall.Win32FileAttributeData); ok {
		st.Atime = ftFloat(d.LastAccessTime)
		st.Mtime = ftFloat(d.LastWriteTime)
		st.Ctime = ftFloat(d.CreationTime)
	}
	if info, ok := handleInfo(p, fi.Mode()&os.ModeSymlink != 0); ok {
		st.Ino = uint64(info.FileIndexHigh)<<32 | uint64(info.FileIndexLow)
		st.Nlink = int(info.NumberOfLinks)
	}
	return st
}

func ftFloat(ft syscall.Filetime) float64 { return float64(ft.Nanoseconds()) / 1e9 }

func winMode(p string, fi os.FileInfo) uint32 {
	var m uint32 = 0o444
	if fi.Mode().Perm()&0o200 != 0 {
		m |= 0o222
	}
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		return syscall.S_IFLNK | m
	case fi.IsDir():
		return syscall.S_IFDIR | m | 0o111
	}
	switch strings.ToLower(filepath.Ext(p)) {
	case ".exe", ".bat", ".cmd", ".com":
		m |= 0o111
	}
	return syscall.S_IFREG | m
}

// handleInfo opens p (a directory too, and a link itself when link) for
// GetFileInformationByHandle.
func handleInfo(p string, link bool) (windows.ByHandleFileInformation, bool) {
	var info windows.ByHandleFileInformation
	name, err := windows.UTF16PtrFromString(p)
	if err != nil {
		return info, false
	}
	flags := uint32(windows.FILE_FLAG_BACKUP_SEMANTICS)
	if link {
		flags |= windows.FILE_FLAG_OPEN_REPARSE_POINT
	}
	h, err := windows.CreateFile(name, 0, windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE,
		nil, windows.OPEN_EXISTING, flags, 0)
	if err != nil {
		return info, false
	}
	defer windows.CloseHandle(h)
	if windows.GetFileInformationByHandle(h, &info) != nil {
		return info, false
	}
	return info, true
}

// osAccess is os.access as CPython implements it on Windows: the file
// exists, and for W_OK it is not read-only.
func osAccess(p string, mode uint32) bool {
	fi, err := os.Stat(p)
	if err != nil {
		return false
	}
	return mode&2 == 0 || fi.IsDir() || fi.Mode().Perm()&0o200 != 0
}

// Umask is 0 on Windows: files get their permissions from the ACL their
// directory passes on, not from a creation mask.
func Umask() uint32 { return 0 }

// keepOwner is nothing to do on Windows: a file replaced through a
// temporary file in the same directory inherits that directory's ACL,
// and owners are Windows SIDs, which win_owner (not supported yet) would
// set.
func keepOwner(string, os.FileInfo) error { return nil }
