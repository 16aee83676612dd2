package file

import (
	"golang.org/x/sys/windows"

	"github.com/brinesalt/brine/internal/ordered"
)

// statvfsPath is file.statvfs on Windows, where CPython has no
// os.statvfs (Salt's win_file has no statvfs either): the fields are
// derived from GetDiskFreeSpaceEx for the volume holding p, with a
// block size of 1 byte; the inode fields, which NTFS does not have, are 0.
func statvfsPath(p string) (*ordered.Map, error) {
	name, err := windows.UTF16PtrFromString(p)
	if err != nil {
		return nil, err
	}
	var avail, total, free uint64
	if err := windows.GetDiskFreeSpaceEx(name, &avail, &total, &free); err != nil {
		return nil, err
	}
	return ordered.FromPairs("f_bavail", int(avail), "f_bfree", int(free), "f_blocks", int(total),
		"f_bsize", 1, "f_favail", 0, "f_ffree", 0, "f_files", 0,
		"f_flag", 0, "f_frsize", 1, "f_namemax", 255), nil
}
