package file

import "os"

// posixStat is the part of os.stat's result the file module reports
// (st_ino, st_uid, st_mode, …), filled per platform: from the kernel's
// stat on Unix, and on Windows as CPython's os.stat fills it there
// (uid and gid 0, st_mode from the attributes, st_ino the file index).
type posixStat struct {
	Ino                 uint64
	Nlink               int
	UID, GID            int
	Size                int64
	Mode                uint32
	Atime, Mtime, Ctime float64
}

// statFollow stats p, following a final symlink unless follow is false.
func statFollow(p string, follow bool) (posixStat, os.FileInfo, error) {
	var fi os.FileInfo
	var err error
	if follow {
		fi, err = os.Stat(p)
	} else {
		fi, err = os.Lstat(p)
	}
	if err != nil {
		return posixStat{}, nil, err
	}
	return statOf(p, fi), fi, nil
}

// Nlink is the link count of p itself (lstat's st_nlink); ok is false
// when p is missing.
func Nlink(p string) (int, bool) {
	st, _, err := statFollow(p, false)
	if err != nil {
		return 0, false
	}
	return st.Nlink, true
}
