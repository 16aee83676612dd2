//go:build !windows

package cmd

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/brinesalt/brine/state/modules"
)

// umaskMu serialises umask changes around process starts.
var umaskMu sync.Mutex

// procCred is the identity a child process is started with.
type procCred = *syscall.Credential

// resetLocale: cmdmod's reset_system_locale sets the C locale, on Unix
// only.
const resetLocale = true

// lookupRunas resolves runas and group. Salt runs the command through
// `su` to get the user's login environment; Brine switches credentials
// directly and sets the login variables itself.
func lookupRunas(runas, group, _ string) (*runasUser, error) {
	if runas == "" && group == "" {
		u := &runasUser{}
		if cur, err := user.Current(); err == nil {
			u.name, u.home = cur.Username, cur.HomeDir
		}
		if h, err := os.UserHomeDir(); err == nil {
			u.home = h
		}
		return u, nil
	}
	r := &runasUser{}
	uid, gid := uint32(os.Getuid()), uint32(os.Getgid())
	if runas != "" {
		u, err := user.Lookup(runas)
		if err != nil {
			return nil, &modules.ExecutionError{Msg: fmt.Sprintf("User '%s' is not available", runas)}
		}
		r.name, r.home = u.Username, u.HomeDir
		r.shell = loginShell(runas)
		n, _ := strconv.ParseUint(u.Uid, 10, 32)
		g, _ := strconv.ParseUint(u.Gid, 10, 32)
		uid, gid = uint32(n), uint32(g)
	}
	if group != "" {
		g, err := user.LookupGroup(group)
		if err != nil {
			return nil, &modules.ExecutionError{Msg: fmt.Sprintf("Group '%s' is not available", runas)}
		}
		n, _ := strconv.ParseUint(g.Gid, 10, 32)
		gid = uint32(n)
	}
	r.cred = &syscall.Credential{Uid: uid, Gid: gid, Groups: supplementary(r.name)}
	if uid == uint32(os.Getuid()) && gid == uint32(os.Getgid()) {
		r.cred = nil
	}
	return r, nil
}

func supplementary(name string) []uint32 {
	if name == "" {
		return []uint32{}
	}
	u, err := user.Lookup(name)
	if err != nil {
		return []uint32{}
	}
	ids, _ := u.GroupIds()
	out := []uint32{}
	for _, id := range ids {
		if n, err := strconv.ParseUint(id, 10, 32); err == nil {
			out = append(out, uint32(n))
		}
	}
	return out
}

func loginShell(name string) string {
	b, err := os.ReadFile("/etc/passwd")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Split(line, ":")
		if len(f) == 7 && f[0] == name {
			return f[6]
		}
	}
	return ""
}

// chownToRunas gives the script file to the user it runs as.
func chownToRunas(path string, u *runasUser) {
	if u.cred != nil {
		_ = os.Chown(path, int(u.cred.Uid), -1)
	}
}

// startWithUmask starts cmd with the requested umask. Go cannot set it
// for the child alone, so it is set around the fork.
func (p *prepared) startWithUmask(cmd *exec.Cmd) error {
	if p.umask < 0 {
		return cmd.Start()
	}
	umaskMu.Lock()
	defer umaskMu.Unlock()
	old := syscall.Umask(p.umask)
	defer syscall.Umask(old)
	return cmd.Start()
}

// lookPathIn resolves name against the PATH of the child's environment,
// as Python's subprocess does.
func lookPathIn(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		st, err := os.Stat(name)
		if err != nil || st.IsDir() {
			return "", os.ErrNotExist
		}
		return name, nil
	}
	path := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range strings.Split(path, ":") {
		if dir == "" {
			dir = "."
		}
		f := dir + "/" + name
		if st, err := os.Stat(f); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return f, nil
		}
	}
	return "", os.ErrNotExist
}

// checkShell is cmdmod's check that shell= names an executable file.
func checkShell(shell string) (string, error) {
	if shell != "" {
		if st, err := os.Stat(shell); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			return "", &modules.ExecutionError{Msg: fmt.Sprintf("The shell %s is not available", shell)}
		}
	}
	return shell, nil
}

// powerShellArgv: cmdmod prepares PowerShell command lines on Windows
// only.
func (p *prepared) powerShellArgv(*modules.Call, string) bool { return false }

// shellArgv runs cmd through `shell -c` (/bin/sh when none is given).
func (p *prepared) shellArgv(shell, cmd string) {
	if shell == "" {
		shell = "/bin/sh"
	}
	p.argv = []string{shell, "-c", cmd}
}

// sysProc starts the child in its own process group, as the given user,
// so a timeout or cancellation kills the whole group.
func (p *prepared) sysProc(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: p.cred}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}

// detach puts a run_bg child in its own session instead.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr.Setpgid, cmd.SysProcAttr.Setsid = false, true
}

// exitCode is Popen's returncode: the exit status, or minus the signal
// that killed the child.
func exitCode(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -int(ws.Signal())
	}
	return ps.ExitCode()
}

func rootDir() string { return "/" }

// guiWarning is for Windows services only.
func guiWarning(*prepared) string { return "" }

// DefaultShell is cmdmod's DEFAULT_SHELL: $SHELL, else /bin/sh
// (salt/grains/extra.py shell).
var DefaultShell = func() string {
	if s := os.Getenv("SHELL"); s != "" {
		return s
	}
	return "/bin/sh"
}()
