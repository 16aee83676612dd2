//go:build !windows

package file

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// statOf reads the kernel's stat fields out of fi.
func statOf(_ string, fi os.FileInfo) posixStat {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return posixStat{Size: fi.Size(), Mode: uint32(fi.Mode().Perm())}
	}
	a, m, c := statTimes(st)
	return posixStat{Ino: uint64(st.Ino), Nlink: int(st.Nlink), UID: int(st.Uid), GID: int(st.Gid),
		Size: st.Size, Mode: statMode(st), Atime: a, Mtime: m, Ctime: c}
}

func tsFloat(t syscall.Timespec) float64 { return float64(t.Sec) + float64(t.Nsec)/1e9 }

// osAccess is os.access: whether the caller may use p with mode (R_OK 4,
// W_OK 2, X_OK 1, F_OK 0).
func osAccess(p string, mode uint32) bool { return syscall.Access(p, mode) == nil }

// Umask returns the process umask, read from /proc without changing it.
func Umask() uint32 {
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "Umask:"); ok {
				if n, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32); err == nil {
					return uint32(n)
				}
			}
		}
	}
	old := syscall.Umask(0o022)
	syscall.Umask(old)
	return uint32(old)
}

// keepOwner gives dest the owner and group prev had (a replaced file
// keeps them, as Salt's file.copy does).
func keepOwner(dest string, prev os.FileInfo) error {
	st, ok := prev.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	return os.Chown(dest, int(st.Uid), int(st.Gid))
}
