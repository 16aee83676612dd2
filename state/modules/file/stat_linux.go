package file

import "syscall"

// statTimes returns atime, mtime and ctime as Python's float seconds.
func statTimes(st *syscall.Stat_t) (a, m, c float64) {
	return tsFloat(st.Atim), tsFloat(st.Mtim), tsFloat(st.Ctim)
}

func statMode(st *syscall.Stat_t) uint32 { return st.Mode }
