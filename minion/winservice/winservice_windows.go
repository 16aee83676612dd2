package winservice

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/windows"
	"golang.org/x/sys/windows/registry"
	"golang.org/x/sys/windows/svc"
	"golang.org/x/sys/windows/svc/mgr"
)

// Name is the service's name, as Salt's Windows installer registers it
// (pkg/windows: ssm install salt-minion).
const Name = "salt-minion"

// runKey is the per-user Run key session mode registers the minion in.
const runKey = `Software\Microsoft\Windows\CurrentVersion\Run`

// Install registers the salt-minion service: exe run with args, started
// automatically as LocalSystem, restarted by the SCM one minute after a
// failure (three times, the count reset after a day).
func Install(exe string, args []string) error {
	m, err := mgr.Connect()
	if err != nil {
		return fmt.Errorf("install service: connect to the SCM: %w", err)
	}
	defer m.Disconnect()
	if s, err := m.OpenService(Name); err == nil {
		s.Close()
		return fmt.Errorf("install service: %s is already installed", Name)
	}
	s, err := m.CreateService(Name, exe, mgr.Config{
		DisplayName: "salt-minion",
		Description: "Salt Minion (Brine) from saltproject.io",
		StartType:   mgr.StartAutomatic,
	}, args...)
	if err != nil {
		return fmt.Errorf("install service: %w", err)
	}
	defer s.Close()
	restart := mgr.RecoveryAction{Type: mgr.ServiceRestart, Delay: time.Minute}
	if err := s.SetRecoveryActions([]mgr.RecoveryAction{restart, restart, restart}, 86400); err != nil {
		return fmt.Errorf("install service: recovery actions: %w", err)
	}
	return nil
}

// Remove stops the service if it runs and deletes it.
func Remove(ctx context.Context) error {
	m, err := mgr.Connect()
	if err != nil {
		return fmt.Errorf("remove service: connect to the SCM: %w", err)
	}
	defer m.Disconnect()
	s, err := m.OpenService(Name)
	if err != nil {
		return fmt.Errorf("remove service: %s is not installed", Name)
	}
	defer s.Close()
	if err := stopService(ctx, s); err != nil {
		return fmt.Errorf("remove service: %w", err)
	}
	if err := s.Delete(); err != nil {
		return fmt.Errorf("remove service: %w", err)
	}
	return nil
}

// Start asks the SCM to start the service and waits until it runs.
func Start(ctx context.Context) error {
	return withService("start service", func(s *mgr.Service) error {
		if err := s.Start(); err != nil && !errors.Is(err, windows.ERROR_SERVICE_ALREADY_RUNNING) {
			return err
		}
		return waitState(ctx, s, svc.Running)
	})
}

// Stop asks the SCM to stop the service and waits until it stopped.
func Stop(ctx context.Context) error {
	return withService("stop service", func(s *mgr.Service) error { return stopService(ctx, s) })
}

func withService(what string, f func(*mgr.Service) error) error {
	m, err := mgr.Connect()
	if err != nil {
		return fmt.Errorf("%s: connect to the SCM: %w", what, err)
	}
	defer m.Disconnect()
	s, err := m.OpenService(Name)
	if err != nil {
		return fmt.Errorf("%s: open %s: %w", what, Name, err)
	}
	defer s.Close()
	if err := f(s); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

func stopService(ctx context.Context, s *mgr.Service) error {
	st, err := s.Query()
	if err != nil {
		return err
	}
	if st.State == svc.Stopped {
		return nil
	}
	if _, err := s.Control(svc.Stop); err != nil && !errors.Is(err, windows.ERROR_SERVICE_NOT_ACTIVE) {
		return err
	}
	return waitState(ctx, s, svc.Stopped)
}

func waitState(ctx context.Context, s *mgr.Service, want svc.State) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for {
		st, err := s.Query()
		if err != nil {
			return err
		}
		if st.State == want {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("service state %d, waiting for %d: %w", st.State, want, context.Cause(ctx))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Run serves the SCM protocol as the salt-minion service: run gets a
// context that ends on Stop or Shutdown, and its exit code becomes the
// service's exit code.
func Run(run func(ctx context.Context) int) error {
	return svc.Run(Name, &handler{run: run})
}

type handler struct {
	run func(ctx context.Context) int
}

// Execute is the service's main loop (svc.Handler).
func (h *handler) Execute(_ []string, reqs <-chan svc.ChangeRequest, status chan<- svc.Status) (bool, uint32) {
	status <- svc.Status{State: svc.StartPending}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() { done <- h.run(ctx) }()
	status <- svc.Status{State: svc.Running, Accepts: svc.AcceptStop | svc.AcceptShutdown}
	for {
		select {
		case code := <-done:
			status <- svc.Status{State: svc.StopPending}
			return false, uint32(code)
		case r := <-reqs:
			switch r.Cmd {
			case svc.Interrogate:
				status <- r.CurrentStatus
			case svc.Stop, svc.Shutdown:
				status <- svc.Status{State: svc.StopPending, WaitHint: 30000}
				cancel()
				code := <-done
				return false, uint32(code)
			}
		}
	}
}

// SessionInstall switches to session mode: the service, when installed,
// is stopped and disabled (the services.msc step of the manual
// procedure), and the current user's Run key starts exe with args at
// each logon, inside the user's desktop session. A Run key rather than a
// logon scheduled task: it needs no Task Scheduler (COM) and no stored
// password, starts the program in the logon session with the user's
// desktop, and shows in Task Manager's Startup tab, where a user sees it.
func SessionInstall(ctx context.Context, exe string, args []string) error {
	if err := disableService(ctx); err != nil {
		return fmt.Errorf("session install: %w", err)
	}
	k, _, err := registry.CreateKey(registry.CURRENT_USER, runKey, registry.SET_VALUE)
	if err != nil {
		return fmt.Errorf("session install: open HKCU\\%s: %w", runKey, err)
	}
	defer k.Close()
	if err := k.SetStringValue(Name, CommandLine(exe, args)); err != nil {
		return fmt.Errorf("session install: set HKCU\\%s\\%s: %w", runKey, Name, err)
	}
	return nil
}

// SessionRemove removes the Run key value session install wrote.
func SessionRemove() error {
	k, err := registry.OpenKey(registry.CURRENT_USER, runKey, registry.SET_VALUE)
	if err != nil {
		return fmt.Errorf("session remove: open HKCU\\%s: %w", runKey, err)
	}
	defer k.Close()
	if err := k.DeleteValue(Name); err != nil && !errors.Is(err, syscall.ERROR_FILE_NOT_FOUND) {
		return fmt.Errorf("session remove: %w", err)
	}
	return nil
}

// SessionCommand is the command line the Run key holds, "" when session
// mode is not installed for this user.
func SessionCommand() string {
	k, err := registry.OpenKey(registry.CURRENT_USER, runKey, registry.QUERY_VALUE)
	if err != nil {
		return ""
	}
	defer k.Close()
	v, _, _ := k.GetStringValue(Name)
	return v
}

func disableService(ctx context.Context) error {
	m, err := mgr.Connect()
	if err != nil {
		return fmt.Errorf("connect to the SCM: %w", err)
	}
	defer m.Disconnect()
	s, err := m.OpenService(Name)
	if err != nil {
		return nil // no service installed: nothing to disable
	}
	defer s.Close()
	if err := stopService(ctx, s); err != nil {
		return fmt.Errorf("stop %s: %w", Name, err)
	}
	// Only the start type changes (SERVICE_NO_CHANGE elsewhere): no
	// round trip through mgr.Config, whose optional levels not every
	// service manager answers (Wine's services.exe: ERROR_INVALID_LEVEL).
	if err := windows.ChangeServiceConfig(s.Handle, windows.SERVICE_NO_CHANGE, mgr.StartDisabled, windows.SERVICE_NO_CHANGE,
		nil, nil, nil, nil, nil, nil, nil); err != nil {
		return fmt.Errorf("disable %s: %w", Name, err)
	}
	return nil
}

// CommandLine quotes exe and args for a Windows command line.
func CommandLine(exe string, args []string) string {
	parts := []string{syscall.EscapeArg(exe)}
	for _, a := range args {
		parts = append(parts, syscall.EscapeArg(a))
	}
	return strings.Join(parts, " ")
}

// Executable is this program's absolute path.
func Executable() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	return filepath.Abs(exe)
}

// Usage prints the mode commands.
func Usage(w io.Writer) {
	fmt.Fprint(w, `salt-minion.exe [options]            run the minion (in this session, or as the service the SCM starts)
salt-minion.exe install [options]    register the salt-minion service (service mode; options are passed to it)
salt-minion.exe remove               stop and delete the salt-minion service
salt-minion.exe start|stop           start or stop the salt-minion service
salt-minion.exe session install [options]
                                     session mode: disable the service, start at this user's logon instead
salt-minion.exe session remove       undo session install (the service stays disabled)
`)
}
