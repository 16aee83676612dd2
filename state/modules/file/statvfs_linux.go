package file

import (
	"syscall"

	"github.com/brinesalt/brine/internal/ordered"
)

// statvfsMap is os.statvfs's fields; f_favail is f_ffree on Linux.
func statvfsMap(st *syscall.Statfs_t) *ordered.Map {
	return ordered.FromPairs("f_bavail", int(st.Bavail), "f_bfree", int(st.Bfree), "f_blocks", int(st.Blocks),
		"f_bsize", int(st.Bsize), "f_favail", int(st.Ffree), "f_ffree", int(st.Ffree), "f_files", int(st.Files),
		"f_flag", int(st.Flags), "f_frsize", int(st.Frsize), "f_namemax", int(st.Namelen))
}

func statvfsPath(p string) (*ordered.Map, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(p, &st); err != nil {
		return nil, err
	}
	return statvfsMap(&st), nil
}
