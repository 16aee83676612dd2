package cmd

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/winsession"
	"github.com/brinesalt/brine/state/modules"
)

// procCred is the logon token of a runas user on Windows.
type procCred = *windows.Token

// resetLocale: cmdmod sets no C locale on Windows.
const resetLocale = false

// DefaultShell is cmdmod's DEFAULT_SHELL on Windows: %COMSPEC%, else
// C:\Windows\system32\cmd.exe (salt/grains/extra.py shell).
var DefaultShell = func() string {
	if s := os.Getenv("COMSPEC"); s != "" {
		return s
	}
	return `C:\Windows\system32\cmd.exe`
}()

// lookupRunas resolves runas for Windows as salt/utils/win_runas.py
// does: the account must exist (LookupAccountName), and a password logs
// it on (LogonUser, LOGON32_LOGON_INTERACTIVE); the child then starts
// with that token (CreateProcessAsUser, which a minion running as
// LocalSystem may call). Salt's password-less S4U logon is not
// implemented: runas without password is refused with that reason.
func lookupRunas(runas, group, password string) (*runasUser, error) {
	if group != "" {
		// cmdmod._run: SaltInvocationError.
		return nil, &modules.InvocationError{Msg: "group is not currently available on Windows"}
	}
	u := &runasUser{}
	if runas == "" {
		if cur, err := user.Current(); err == nil {
			u.name, u.home = cur.Username, cur.HomeDir
		}
		if h, err := os.UserHomeDir(); err == nil {
			u.home = h
		}
		return u, nil
	}
	name, domain, err := splitAccount(runas)
	if err != nil {
		return nil, &modules.ExecutionError{Msg: err.Error()}
	}
	u.name = name
	if lu, err := user.Lookup(runas); err == nil {
		u.home = lu.HomeDir
	}
	if password == "" {
		return nil, &modules.ExecutionError{Msg: fmt.Sprintf(
			"runas %s without password= is not supported by this minion (Salt's S4U logon); give the user's password", runas)}
	}
	tok, err := logonUser(name, domain, password)
	if err != nil {
		return nil, &modules.ExecutionError{Msg: strings.TrimRight(err.Error(), "\r\n.") + "."}
	}
	u.cred = tok
	return u, nil
}

// splitAccount checks that the account exists and returns its name and
// domain (win_runas.split_username after LookupAccountName).
func splitAccount(account string) (name, domain string, err error) {
	_, dom, _, err := windows.LookupSID("", account)
	if err != nil {
		return "", "", err
	}
	name = account
	if i := strings.LastIndexAny(account, `\`); i >= 0 {
		name = account[i+1:]
	} else if i := strings.Index(account, "@"); i >= 0 {
		name = account[:i]
	}
	return name, dom, nil
}

var (
	advapi32       = windows.NewLazySystemDLL("advapi32.dll")
	procLogonUserW = advapi32.NewProc("LogonUserW")
)

const (
	logon32LogonInteractive = 2
	logon32ProviderDefault  = 0
)

// logonUser is LogonUserW; x/sys/windows has no wrapper for it.
func logonUser(name, domain, password string) (*windows.Token, error) {
	n, _ := windows.UTF16PtrFromString(name)
	d, _ := windows.UTF16PtrFromString(domain)
	p, _ := windows.UTF16PtrFromString(password)
	var tok windows.Token
	r, _, e := procLogonUserW.Call(uintptr(unsafe.Pointer(n)), uintptr(unsafe.Pointer(d)), uintptr(unsafe.Pointer(p)),
		logon32LogonInteractive, logon32ProviderDefault, uintptr(unsafe.Pointer(&tok)))
	if r == 0 {
		return nil, e
	}
	return &tok, nil
}

// chownToRunas is nothing to do on Windows: the script lives in the
// minion's cache, which the runas user reads through its ACL.
func chownToRunas(string, *runasUser) {}

// startWithUmask starts cmd; Windows has no umask (salt.utils.files
// set_umask skips it there).
func (p *prepared) startWithUmask(cmd *exec.Cmd) error { return cmd.Start() }

// lookPathIn resolves name against the child's PATH with PATHEXT, as
// CreateProcess through Python's subprocess finds it.
func lookPathIn(name string, env []string) (string, error) {
	exts := []string{".com", ".exe", ".bat", ".cmd"}
	path := ""
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		switch strings.ToUpper(k) {
		case "PATH":
			path = v
		case "PATHEXT":
			exts = strings.Split(strings.ToLower(v), ";")
		}
	}
	try := func(f string) (string, bool) {
		if filepath.Ext(f) != "" {
			if st, err := os.Stat(f); err == nil && !st.IsDir() {
				return f, true
			}
		}
		for _, e := range exts {
			if st, err := os.Stat(f + e); err == nil && !st.IsDir() {
				return f + e, true
			}
		}
		return "", false
	}
	if strings.ContainsAny(name, `/\:`) {
		if f, ok := try(name); ok {
			return f, nil
		}
		return "", os.ErrNotExist
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			continue
		}
		if f, ok := try(filepath.Join(dir, name)); ok {
			return f, nil
		}
	}
	return "", os.ErrNotExist
}

// checkShell finds shell= on the PATH and accepts only the shells Salt
// accepts on Windows (cmdmod._run): cmd.exe, powershell.exe, pwsh.exe.
func checkShell(shell string) (string, error) {
	if shell == "" {
		return "", nil
	}
	p, err := lookPathIn(shell, os.Environ())
	if err != nil {
		return "", &modules.ExecutionError{Msg: fmt.Sprintf("shell binary not found: %s", shell)}
	}
	switch strings.ToLower(filepath.Base(p)) {
	case "cmd.exe", "powershell.exe", "pwsh.exe":
		return p, nil
	}
	return "", &modules.ExecutionError{Msg: fmt.Sprintf("unsupported shell type: %s", p)}
}

// powerShellArgv builds the command line for shell=powershell or pwsh
// as cmdmod._prep_powershell_cmd does, whatever python_shell says:
// `shell -NonInteractive -NoProfile -ExecutionPolicy Bypass` then
// `-File script args…` for cmd.script, `-EncodedCommand cmd` with
// encoded_cmd=True, else `-Command cmd` (a list joined with spaces).
// It reports whether shell is a PowerShell.
func (p *prepared) powerShellArgv(c *modules.Call, shell string) bool {
	base := strings.ToLower(filepath.Base(shell))
	if base != "powershell.exe" && base != "pwsh.exe" {
		return false
	}
	var words []string
	switch x := c.Arg("cmd").(type) {
	case []any:
		for _, a := range x {
			words = append(words, ordered.KeyString(a))
		}
	default:
		words = []string{ordered.KeyString(x)}
	}
	p.argv = []string{shell, "-NonInteractive", "-NoProfile", "-ExecutionPolicy", "Bypass"}
	switch {
	case c.Fun != nil && strings.HasPrefix(c.Fun.Name, "cmd.script"):
		p.argv = append(append(p.argv, "-File"), words...)
	case c.Bool("encoded_cmd"):
		p.argv = append(p.argv, "-EncodedCommand", strings.Join(words, " "))
	default:
		p.argv = append(p.argv, "-Command", strings.Join(words, " "))
	}
	p.display = strings.Join(words, " ")
	return true
}

// shellArgv runs cmd through cmd.exe /c (salt/platform/win.py
// prepend_cmd, the command line passed as written); PowerShell is
// powerShellArgv's.
func (p *prepared) shellArgv(shell, cmd string) {
	if shell == "" {
		shell = DefaultShell
	}
	p.argv = []string{shell}
	p.cmdline = syscall.EscapeArg(shell) + " /c " + cmd
}

// sysProc passes the raw command line and the runas token. Windows has
// no process groups to kill: cancellation ends the process itself.
func (p *prepared) sysProc(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CmdLine: p.cmdline}
	if p.cred != nil {
		cmd.SysProcAttr.Token = syscall.Token(*p.cred)
	}
}

// detach starts a run_bg child in a new process group, so a Ctrl-Break
// sent to the minion's console does not reach it.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr.CreationFlags |= windows.CREATE_NEW_PROCESS_GROUP
}

// exitCode is the process's exit code.
func exitCode(ps *os.ProcessState) int { return ps.ExitCode() }

// rootDir is os.path.abspath(os.sep), the root of the system drive.
func rootDir() string {
	if d := os.Getenv("SystemDrive"); d != "" {
		return d + `\`
	}
	r, _ := filepath.Abs(`\`)
	return r
}

// guiWarning names Session 0 isolation when a minion running as a
// service starts a GUI program: the window goes to the service's
// invisible desktop, never to a user's.
func guiWarning(p *prepared) string {
	if !winsession.IsService() {
		return ""
	}
	exe := p.argv[0]
	if p.cmdline != "" {
		exe = firstWord(strings.TrimSpace(strings.SplitN(p.cmdline, " /c ", 2)[1]))
	}
	path, err := lookPathIn(exe, p.env)
	if err != nil || !winsession.IsGUIProgram(path) {
		return ""
	}
	return fmt.Sprintf("%s is a GUI program and this minion runs as a Windows service in Session 0, "+
		"where no user sees its windows; run the minion in session mode (salt-minion.exe session install) "+
		"to start GUI programs on a user's desktop", filepath.Base(path))
}

// firstWord is the program a cmd.exe command line starts.
func firstWord(s string) string {
	if strings.HasPrefix(s, `"`) {
		if i := strings.Index(s[1:], `"`); i >= 0 {
			return s[1 : i+1]
		}
	}
	if i := strings.IndexAny(s, " \t"); i >= 0 {
		return s[:i]
	}
	return s
}
