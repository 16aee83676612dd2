package winservice

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
	"golang.org/x/sys/windows/svc"
	"golang.org/x/sys/windows/svc/mgr"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
)

func req(name string) modules.Param { return modules.Param{Name: name} }

func opt(name string, def any) modules.Param {
	return modules.Param{Name: name, Default: def, Optional: true}
}

func register(name, doc string, fn modules.Func, spec modules.Spec) {
	modules.Register(modules.Function{Name: "service." + name, Doc: doc, Spec: spec, Fn: fn})
}

func params(p ...modules.Param) modules.Spec { return modules.Spec{Params: p} }

func init() {
	register("get_all", "List every service name.", func(context.Context, *modules.Call) (any, error) { return getAll() }, params())
	register("get_enabled", "List the services that start automatically.", func(context.Context, *modules.Call) (any, error) {
		return byStartType("Auto")
	}, params())
	register("get_disabled", "List the services that start manually or are disabled.", func(context.Context, *modules.Call) (any, error) {
		return byStartType("Manual", "Disabled")
	}, params())
	register("available", "Report whether the service exists (names compared without case).", available, params(req("name")))
	register("missing", "Report whether the service does not exist.", missing, params(req("name")))
	register("get_service_name", "Map display names to service names, for the given names or all.", serviceNames,
		modules.Spec{VarArgs: true})
	register("info", "Return the service's configuration and status as the SCM reports them.", func(_ context.Context, c *modules.Call) (any, error) {
		return Info(c.Str("name"))
	}, params(req("name")))
	register("status", "Report whether the service runs; a glob returns {name: bool} for the matching ones.", status,
		modules.Spec{Params: []modules.Param{req("name"), opt("sig", nil)}, VarArgs: true, VarKw: true})
	register("start", "Start the service and wait until it runs (a disabled one is set to manual first).", start,
		params(req("name"), opt("timeout", 90)))
	register("stop", "Stop the service and wait until it stopped.", stop, params(req("name"), opt("timeout", 90)))
	register("restart", "Stop and start the service; salt-minion restarts itself through net stop/net start.", restart,
		params(req("name"), opt("timeout", 90)))
	register("enable", "Set the service to start with Windows (start_type auto, manual, …).", enable,
		modules.Spec{Params: []modules.Param{req("name"), opt("start_type", "auto"), opt("start_delayed", false)}, VarKw: true})
	register("disable", "Set the service's start type to disabled.", disable, modules.Spec{Params: []modules.Param{req("name")}, VarKw: true})
	register("enabled", "Report whether the service starts automatically.", func(_ context.Context, c *modules.Call) (any, error) {
		return isEnabled(c.Str("name"))
	}, modules.Spec{Params: []modules.Param{req("name")}, VarKw: true})
	register("disabled", "Report whether the service does not start automatically.", func(_ context.Context, c *modules.Call) (any, error) {
		on, err := isEnabled(c.Str("name"))
		return !on, err
	}, params(req("name")))
}

var (
	serviceStates = map[svc.State]string{svc.Stopped: "Stopped", svc.StartPending: "Start Pending",
		svc.StopPending: "Stop Pending", svc.Running: "Running", svc.ContinuePending: "Continue Pending",
		svc.PausePending: "Pause Pending", svc.Paused: "Paused"}
	startTypes    = map[uint32]string{0: "Boot", 1: "System", 2: "Auto", 3: "Manual", 4: "Disabled"}
	errorControls = map[uint32]string{0: "Ignore", 1: "Normal", 2: "Severe", 3: "Critical"}
	serviceTypes  = []struct {
		bit  uint32
		name string
	}{{1, "Kernel Driver"}, {2, "File System Driver"}, {4, "Adapter Driver"}, {8, "Recognizer Driver"},
		{16, "Win32 Own Process"}, {32, "Win32 Share Process"}, {256, "Interactive"}}
	controls = []struct {
		bit  uint32
		name string
	}{{1, "Stop"}, {2, "Pause/Continue"}, {4, "Shutdown"}, {8, "Change Parameters"}, {16, "Netbind Change"},
		{32, "Hardware Profile Change"}, {64, "Power Event"}, {128, "Session Change"}, {256, "Pre-Shutdown"},
		{512, "Time Change"}, {1024, "Trigger Event"}}
)

func connect() (*mgr.Mgr, error) {
	m, err := mgr.Connect()
	if err != nil {
		return nil, modules.Errorf("Failed to connect to the SCM: %s", errText(err))
	}
	return m, nil
}

// errText is pywintypes.error.strerror: the system message without its
// trailing period and newline.
func errText(err error) string { return strings.TrimRight(err.Error(), ".\r\n") }

func getAll() (any, error) {
	m, err := connect()
	if err != nil {
		return nil, err
	}
	defer m.Disconnect()
	names, err := m.ListServices()
	if err != nil {
		return nil, modules.Errorf("Failed to list services: %s", errText(err))
	}
	sort.Strings(names)
	out := make([]any, len(names))
	for i, n := range names {
		out[i] = n
	}
	return out, nil
}

func names() ([]string, error) {
	all, err := getAll()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range all.([]any) {
		out = append(out, n.(string))
	}
	return out, nil
}

func byStartType(want ...string) (any, error) {
	all, err := names()
	if err != nil {
		return nil, err
	}
	out := []any{}
	for _, n := range all {
		info, err := Info(n)
		if err != nil {
			continue
		}
		for _, w := range want {
			if info.Value("StartType") == w {
				out = append(out, n)
			}
		}
	}
	return out, nil
}

func available(_ context.Context, c *modules.Call) (any, error) {
	all, err := names()
	if err != nil {
		return nil, err
	}
	for _, n := range all {
		if strings.EqualFold(n, c.Str("name")) {
			return true, nil
		}
	}
	return false, nil
}

func missing(_ context.Context, c *modules.Call) (any, error) {
	all, err := names()
	if err != nil {
		return nil, err
	}
	for _, n := range all {
		if n == c.Str("name") {
			return false, nil
		}
	}
	return true, nil
}

func serviceNames(_ context.Context, c *modules.Call) (any, error) {
	all, err := names()
	if err != nil {
		return nil, err
	}
	m, err := connect()
	if err != nil {
		return nil, err
	}
	defer m.Disconnect()
	want := map[string]bool{}
	for _, a := range c.VarArgs {
		want[ordered.KeyString(a)] = true
	}
	out := ordered.New()
	for _, n := range all {
		s, err := m.OpenService(n)
		if err != nil {
			continue
		}
		cfg, err := queryConfig(s)
		s.Close()
		if err != nil {
			continue
		}
		if len(want) == 0 || want[cfg.DisplayName] || want[n] || want[strings.ToLower(n)] {
			out.Set(cfg.DisplayName, n)
		}
	}
	return out, nil
}

// Info is salt.utils.win_service.info.
func Info(name string) (*ordered.Map, error) {
	m, err := connect()
	if err != nil {
		return nil, err
	}
	defer m.Disconnect()
	s, err := m.OpenService(name)
	if err != nil {
		return nil, modules.Errorf("Failed To Open %s: %s", name, errText(err))
	}
	defer s.Close()
	cfg, err := queryConfig(s)
	if err != nil {
		return nil, modules.Errorf("Failed To Open %s: %s", name, errText(err))
	}
	var st windows.SERVICE_STATUS_PROCESS
	var need uint32
	if err := windows.QueryServiceStatusEx(s.Handle, windows.SC_STATUS_PROCESS_INFO, (*byte)(unsafe.Pointer(&st)),
		uint32(unsafe.Sizeof(st)), &need); err != nil {
		return nil, modules.Errorf("Failed To Open %s: %s", name, errText(err))
	}
	ret := ordered.New()
	if sid, _, _, err := windows.LookupSID("", `NT Service\`+name); err == nil {
		ret.Set("sid", sid.String())
	} else {
		ret.Set("sid", "Failed to get SID")
	}
	deps := []any{}
	for _, d := range cfg.Dependencies {
		deps = append(deps, d)
	}
	ret.Set("BinaryPath", cfg.BinaryPathName)
	ret.Set("LoadOrderGroup", cfg.LoadOrderGroup)
	ret.Set("TagID", int(cfg.TagId))
	ret.Set("Dependencies", deps)
	ret.Set("ServiceAccount", cfg.ServiceStartName)
	ret.Set("DisplayName", cfg.DisplayName)
	ret.Set("Description", cfg.Description)
	ret.Set("Status_ServiceCode", int(st.ServiceSpecificExitCode))
	ret.Set("Status_CheckPoint", int(st.CheckPoint))
	ret.Set("Status_WaitHint", int(st.WaitHint))
	ret.Set("StartTypeDelayed", cfg.DelayedAutoStart)
	ret.Set("ServiceType", flags(cfg.ServiceType, serviceTypes))
	ret.Set("ControlsAccepted", flags(st.ControlsAccepted, controls))
	switch st.Win32ExitCode {
	case 0:
		ret.Set("Status_ExitCode", "No Error")
	case 1066:
		ret.Set("Status_ExitCode", "Service Specific Error")
	default:
		ret.Set("Status_ExitCode", int(st.Win32ExitCode))
	}
	ret.Set("StartType", named(cfg.StartType, startTypes))
	ret.Set("ErrorControl", named(cfg.ErrorControl, errorControls))
	if s, ok := serviceStates[svc.State(st.CurrentState)]; ok {
		ret.Set("Status", s)
	} else {
		ret.Set("Status", int(st.CurrentState))
	}
	return ret, nil
}

func flags(v uint32, table []struct {
	bit  uint32
	name string
}) any {
	out := []any{}
	for _, f := range table {
		if v&f.bit != 0 {
			out = append(out, f.name)
		}
	}
	if len(out) == 0 {
		return int(v)
	}
	return out
}

func named(v uint32, table map[uint32]string) any {
	if s, ok := table[v]; ok {
		return s
	}
	return int(v)
}

func status(_ context.Context, c *modules.Call) (any, error) {
	name := c.Str("name")
	all, err := names()
	if err != nil {
		return nil, err
	}
	glob := strings.ContainsAny(name, "*?") || (strings.Contains(name, "[") && strings.Contains(name, "]"))
	targets := []string{name}
	if glob {
		targets = nil
		for _, n := range all {
			if ok, _ := filepath.Match(name, n); ok {
				targets = append(targets, n)
			}
		}
	}
	out := ordered.New()
	for _, t := range targets {
		info, err := Info(t)
		if err != nil {
			out.Set(t, "Not Found")
			continue
		}
		st := info.Value("Status")
		out.Set(t, st == "Running" || st == "Stop Pending")
	}
	if glob {
		return out, nil
	}
	return out.Value(name), nil
}

// wait is _status_wait: poll while the service is in one of states,
// sleeping its wait hint (1 to 10 seconds), until end.
func wait(ctx context.Context, name string, end time.Time, states ...string) (*ordered.Map, error) {
	for {
		info, err := Info(name)
		if err != nil {
			return nil, err
		}
		cur, _ := info.Value("Status").(string)
		in := false
		for _, s := range states {
			in = in || cur == s
		}
		if !in || !time.Now().Before(end) {
			return info, nil
		}
		d := time.Duration(info.Value("Status_WaitHint").(int)) * time.Millisecond
		d = min(max(d, time.Second), 10*time.Second)
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

func timeout(c *modules.Call) time.Time {
	n, err := strconv.Atoi(strings.TrimSpace(c.Str("timeout")))
	if err != nil {
		n = 90
	}
	return time.Now().Add(time.Duration(n) * time.Second)
}

// Start is win_service.start.
func Start(ctx context.Context, name string, end time.Time) (bool, error) {
	if on, err := isEnabled(name); err == nil && !on {
		if info, err := Info(name); err == nil && info.Value("StartType") == "Disabled" {
			if err := setStartType(name, mgr.StartManual, false); err != nil {
				return false, err
			}
		}
	}
	m, err := connect()
	if err != nil {
		return false, err
	}
	s, err := m.OpenService(name)
	if err == nil {
		err = s.Start()
		s.Close()
	}
	m.Disconnect()
	if err != nil && !errors.Is(err, windows.ERROR_SERVICE_ALREADY_RUNNING) {
		return false, modules.Errorf("Failed To Start %s: %s", name, errText(err))
	}
	info, err := wait(ctx, name, end, "Start Pending", "Stopped")
	if err != nil {
		return false, err
	}
	return info.Value("Status") == "Running", nil
}

func start(ctx context.Context, c *modules.Call) (any, error) {
	return Start(ctx, c.Str("name"), timeout(c))
}

// Stop is win_service.stop.
func Stop(ctx context.Context, name string, end time.Time) (bool, error) {
	m, err := connect()
	if err != nil {
		return false, err
	}
	s, err := m.OpenService(name)
	if err == nil {
		_, err = s.Control(svc.Stop)
		s.Close()
	}
	m.Disconnect()
	if err != nil && !errors.Is(err, windows.ERROR_SERVICE_NOT_ACTIVE) {
		return false, modules.Errorf("Failed To Stop %s: %s", name, errText(err))
	}
	info, err := wait(ctx, name, end, "Running", "Stop Pending")
	if err != nil {
		return false, err
	}
	return info.Value("Status") == "Stopped", nil
}

func stop(ctx context.Context, c *modules.Call) (any, error) {
	return Stop(ctx, c.Str("name"), timeout(c))
}

func restart(ctx context.Context, c *modules.Call) (any, error) {
	name := c.Str("name")
	if strings.Contains(name, "salt-minion") {
		// win_service.restart's task, run directly: the minion cannot
		// wait for its own stop.
		cmd := exec.Command(comspec())
		cmd.SysProcAttr = &syscall.SysProcAttr{
			CmdLine:       syscall.EscapeArg(comspec()) + " /c ping -n 3 127.0.0.1 && net stop salt-minion && net start salt-minion",
			CreationFlags: windows.CREATE_NEW_PROCESS_GROUP | windows.DETACHED_PROCESS,
		}
		if err := cmd.Start(); err != nil {
			return nil, modules.Errorf("Failed To Restart %s: %s", name, errText(err))
		}
		go cmd.Wait() //nolint:errcheck // detached; its status is not reported
		return true, nil
	}
	end := timeout(c)
	ok, err := Stop(ctx, name, end)
	if err != nil || !ok {
		return ok, err
	}
	return Start(ctx, name, end)
}

func comspec() string {
	if s := os.Getenv("COMSPEC"); s != "" {
		return s
	}
	return `C:\Windows\system32\cmd.exe`
}

var startTypeNames = map[string]uint32{"boot": 0, "system": 1, "auto": 2, "manual": 3, "disabled": 4}

// setStartType is the start_type part of win_service.modify.
func setStartType(name string, t uint32, delayed bool) error {
	m, err := connect()
	if err != nil {
		return err
	}
	defer m.Disconnect()
	s, err := m.OpenService(name)
	if err != nil {
		return modules.Errorf("Failed To Open %s: %s", name, errText(err))
	}
	defer s.Close()
	if err := changeStartType(s, t, delayed); err != nil {
		return modules.Errorf("Failed To Modify %s: %s", name, errText(err))
	}
	return nil
}

func enable(_ context.Context, c *modules.Call) (any, error) {
	name, st := c.Str("name"), strings.ToLower(c.Str("start_type"))
	t, ok := startTypeNames[st]
	if !ok {
		return nil, modules.Errorf("Invalid Start Type: %s", c.Str("start_type"))
	}
	delayed := c.Bool("start_delayed")
	if err := setStartType(name, t, delayed); err != nil {
		return nil, err
	}
	info, err := Info(name)
	if err != nil {
		return nil, err
	}
	got := strings.ToLower(fmt.Sprint(info.Value("StartType")))
	if st == "auto" {
		return got == st && info.Value("StartTypeDelayed") == delayed, nil
	}
	return got == st, nil
}

func disable(_ context.Context, c *modules.Call) (any, error) {
	if err := setStartType(c.Str("name"), mgr.StartDisabled, false); err != nil {
		return nil, err
	}
	info, err := Info(c.Str("name"))
	if err != nil {
		return nil, err
	}
	return info.Value("StartType") == "Disabled", nil
}

func isEnabled(name string) (bool, error) {
	info, err := Info(name)
	if err != nil {
		return false, err
	}
	return info.Value("StartType") == "Auto", nil
}
