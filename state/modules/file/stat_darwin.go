package file

import "syscall"

// statTimes returns atime, mtime and ctime as Python's float seconds.
func statTimes(st *syscall.Stat_t) (a, m, c float64) {
	return tsFloat(st.Atimespec), tsFloat(st.Mtimespec), tsFloat(st.Ctimespec)
}

func statMode(st *syscall.Stat_t) uint32 { return uint32(st.Mode) }
