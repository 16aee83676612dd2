package winsystem

import (
	"context"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/modules/reg"
)

func req(name string) modules.Param { return modules.Param{Name: name} }

func opt(name string, def any) modules.Param {
	return modules.Param{Name: name, Default: def, Optional: true}
}

func register(name, doc string, fn modules.Func, p ...modules.Param) {
	modules.Register(modules.Function{Name: "system." + name, Doc: doc, Spec: modules.Spec{Params: p}, Fn: fn})
}

func init() {
	register("get_computer_name", "Return the computer's DNS host name, or False.", func(context.Context, *modules.Call) (any, error) {
		return computerName(), nil
	})
	register("get_pending_computer_name", "Return the name the computer takes at the next boot, or None.",
		func(context.Context, *modules.Call) (any, error) { return pendingName() })
	register("get_hostname", "Return the host name, as the hostname command prints it.", func(context.Context, *modules.Call) (any, error) {
		return computerName(), nil
	})
	register("set_computer_name", "Rename the computer (at the next boot): {Computer Name: {Current, Pending}}, or False.",
		func(_ context.Context, c *modules.Call) (any, error) { return setComputerName(c.Str("name")) }, req("name"))
	register("set_hostname", "Rename the computer (at the next boot); True on success.",
		func(_ context.Context, c *modules.Call) (any, error) {
			r, err := setComputerName(c.Str("hostname"))
			return r != false, err
		}, req("hostname"))
	register("shutdown", "Shut down (or reboot) after timeout minutes (seconds with in_seconds); True when initiated.", shutdown,
		opt("message", nil), opt("timeout", 5), opt("force_close", true), opt("reboot", false), opt("in_seconds", false),
		opt("only_on_pending_reboot", false))
	register("reboot", "Reboot after timeout minutes (seconds with in_seconds); True when initiated.", reboot,
		opt("timeout", 5), opt("in_seconds", false), opt("wait_for_reboot", false), opt("only_on_pending_reboot", false))
	register("shutdown_abort", "Abort a pending shutdown; True on success.", func(context.Context, *modules.Call) (any, error) {
		return abortShutdown(), nil
	})
}

const computerNamePhysicalDNSHostname = 5

func computerName() any {
	n := uint32(256)
	buf := make([]uint16, n)
	if err := windows.GetComputerNameEx(computerNamePhysicalDNSHostname, &buf[0], &n); err != nil {
		return false
	}
	return windows.UTF16ToString(buf[:n])
}

func pendingName() (any, error) {
	cur, _ := computerName().(string)
	vname := "NV Hostname"
	r, err := reg.ReadValue("HKLM", `SYSTEM\CurrentControlSet\Services\Tcpip\Parameters`, &vname, 0)
	if err != nil {
		return nil, err
	}
	p, _ := r.Value("vdata").(string)
	if p == "" || strings.EqualFold(p, cur) {
		return nil, nil
	}
	return p, nil
}

var (
	kernel32                 = windows.NewLazySystemDLL("kernel32.dll")
	procSetComputerNameExW   = kernel32.NewProc("SetComputerNameExW")
	advapi32                 = windows.NewLazySystemDLL("advapi32.dll")
	procInitiateSystemShutEx = advapi32.NewProc("InitiateSystemShutdownExW")
	procAbortSystemShutdownW = advapi32.NewProc("AbortSystemShutdownW")
)

func setComputerName(name string) (any, error) {
	p, err := windows.UTF16PtrFromString(name)
	if err != nil {
		return false, nil
	}
	if r, _, _ := procSetComputerNameExW.Call(computerNamePhysicalDNSHostname, uintptr(unsafe.Pointer(p))); r == 0 {
		return false, nil
	}
	cn := ordered.FromPairs("Current", computerName())
	if pending, err := pendingName(); err == nil && pending != nil {
		cn.Set("Pending", pending)
	}
	return ordered.FromPairs("Computer Name", cn), nil
}

func seconds(c *modules.Call) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(c.Str("timeout")))
	if err != nil {
		return 0, modules.Invalidf("timeout must be an integer")
	}
	if !c.Bool("in_seconds") {
		n *= 60
	}
	return n, nil
}

// initiate is InitiateSystemShutdownEx on this computer, after enabling
// SeShutdownPrivilege, as win32api.InitiateSystemShutdown does.
func initiate(message string, secs int, force, reboot bool) bool {
	enableShutdownPrivilege()
	var msg *uint16
	if message != "" {
		msg, _ = windows.UTF16PtrFromString(message)
	}
	host, _ := windows.UTF16PtrFromString("127.0.0.1")
	// SHTDN_REASON_MAJOR_OTHER | SHTDN_REASON_FLAG_PLANNED
	const reason = 0x80000000
	r, _, _ := procInitiateSystemShutEx.Call(uintptr(unsafe.Pointer(host)), uintptr(unsafe.Pointer(msg)), uintptr(secs),
		boolArg(force), boolArg(reboot), reason)
	return r != 0
}

func boolArg(b bool) uintptr {
	if b {
		return 1
	}
	return 0
}

func enableShutdownPrivilege() {
	var tok windows.Token
	if windows.OpenProcessToken(windows.CurrentProcess(), windows.TOKEN_ADJUST_PRIVILEGES|windows.TOKEN_QUERY, &tok) != nil {
		return
	}
	defer tok.Close()
	var luid windows.LUID
	name, _ := windows.UTF16PtrFromString("SeShutdownPrivilege")
	if windows.LookupPrivilegeValue(nil, name, &luid) != nil {
		return
	}
	tp := windows.Tokenprivileges{PrivilegeCount: 1}
	tp.Privileges[0] = windows.LUIDAndAttributes{Luid: luid, Attributes: windows.SE_PRIVILEGE_ENABLED}
	_ = windows.AdjustTokenPrivileges(tok, false, &tp, 0, nil, nil)
}

func refusePending(c *modules.Call) error {
	if c.Bool("only_on_pending_reboot") {
		return modules.Errorf("only_on_pending_reboot is not supported by this minion (get_pending_reboot)")
	}
	return nil
}

func shutdown(_ context.Context, c *modules.Call) (any, error) {
	if err := refusePending(c); err != nil {
		return nil, err
	}
	secs, err := seconds(c)
	if err != nil {
		return nil, err
	}
	ok := initiate(c.Str("message"), secs, c.Bool("force_close"), c.Bool("reboot"))
	if !ok {
		c.Env.Log.Error("Failed to shutdown the system")
	}
	return ok, nil
}

func reboot(ctx context.Context, c *modules.Call) (any, error) {
	if err := refusePending(c); err != nil {
		return nil, err
	}
	secs, err := seconds(c)
	if err != nil {
		return nil, err
	}
	ok := initiate("", secs, true, true)
	if !ok {
		c.Env.Log.Error("Failed to shutdown the system")
	}
	if c.Bool("wait_for_reboot") {
		t := time.NewTimer(time.Duration(secs+30) * time.Second)
		defer t.Stop()
		select {
		case <-ctx.Done():
		case <-t.C:
		}
	}
	return ok, nil
}

func abortShutdown() bool {
	host, _ := windows.UTF16PtrFromString("127.0.0.1")
	r, _, _ := procAbortSystemShutdownW.Call(uintptr(unsafe.Pointer(host)))
	return r != 0
}
