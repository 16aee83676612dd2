package testhosts

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

// SystemDirs are the controller's directories that no test may change the
// mode or owner of: the harness mounts private copies over /tmp, /var/tmp
// and /run/salt inside hosts, and a chmod through a bind mount lands on its
// source, so a slip there (or in a test that copies a tree onto /, as the
// conformance suite's run.py did) shows here first. A /tmp of 0755 breaks
// every unprivileged user of the machine.
var SystemDirs = []string{"/", "/tmp", "/var/tmp", "/run"}

// GuardSystemDirs runs run (a TestMain's m.Run) and fails the run, with a
// message on stderr, when it changed the mode or owner of any of
// SystemDirs. It returns run's exit code, or 1.
func GuardSystemDirs(run func() int) int {
	return guardDirs(SystemDirs, os.Stderr, run)
}

func guardDirs(dirs []string, stderr io.Writer, run func() int) int {
	before := dirStates(dirs)
	code := run()
	after := dirStates(dirs)
	for _, d := range dirs {
		if before[d] != after[d] {
			fmt.Fprintf(stderr, "FAIL: the tests changed %s from %s to %s\n", d, before[d], after[d])
			code = 1
		}
	}
	return code
}

// dirStates records each directory's mode and owner ("drwxrwxrwt 0:0").
func dirStates(dirs []string) map[string]string {
	out := map[string]string{}
	for _, d := range dirs {
		st, err := os.Lstat(d)
		if err != nil {
			out[d] = err.Error()
			continue
		}
		s := st.Mode().String()
		if sys, ok := st.Sys().(*syscall.Stat_t); ok {
			s += fmt.Sprintf(" %d:%d", sys.Uid, sys.Gid)
		}
		out[d] = s
	}
	return out
}
