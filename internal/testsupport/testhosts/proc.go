package testhosts

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// procRef names a process by pid and start time, so a recycled pid is never
// mistaken for a process the harness started.
type procRef struct {
	Pid   int    `json:"pid"`
	Start uint64 `json:"start"`
}

// procStat returns the start time (clock ticks since boot) and state letter
// of pid from /proc/<pid>/stat.
func procStat(pid int) (uint64, byte, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	// comm may contain spaces and parentheses: fields restart after the last ')'.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("parse /proc/%d/stat", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return 0, 0, fmt.Errorf("parse /proc/%d/stat", pid)
	}
	start, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("parse /proc/%d/stat: %w", pid, err)
	}
	return start, f[0][0], nil
}

func refOf(pid int) (procRef, error) {
	start, _, err := procStat(pid)
	if err != nil {
		return procRef{}, err
	}
	return procRef{Pid: pid, Start: start}, nil
}

// alive reports whether the very process p names still runs (zombies count
// as dead).
func (p procRef) alive() bool {
	if p.Pid <= 0 {
		return false
	}
	start, state, err := procStat(p.Pid)
	return err == nil && start == p.Start && state != 'Z' && state != 'X'
}

// mntNS returns the process's mount namespace link ("mnt:[4026532…]").
func (p procRef) mntNS() (string, error) {
	if !p.alive() {
		return "", fmt.Errorf("process %d is gone", p.Pid)
	}
	return os.Readlink(fmt.Sprintf("/proc/%d/ns/mnt", p.Pid))
}

// signal sends sig to the very process p names, never to a process that
// reused its pid: the handle comes first (a pidfd since Go 1.23, which
// keeps naming the process it was opened on even after it dies), and only
// then is the start time checked, so a pid recycled between listing and
// killing (pid_max can be as low as 32768 on a busy machine) is left alone.
func (p procRef) signal(sig syscall.Signal) {
	if p.Pid <= 0 {
		return
	}
	proc, err := os.FindProcess(p.Pid)
	if err != nil {
		return
	}
	defer proc.Release()
	if p.alive() {
		_ = proc.Signal(sig)
	}
}

// kill sends SIGTERM, waits up to grace, then SIGKILLs and waits for death.
func (p procRef) kill(ctx context.Context, grace time.Duration) error {
	if !p.alive() {
		return nil
	}
	p.signal(syscall.SIGTERM)
	deadline := time.Now().Add(grace)
	for p.alive() && time.Now().Before(deadline) {
		if err := sleepCtx(ctx, 5*time.Millisecond); err != nil {
			return err
		}
	}
	if !p.alive() {
		return nil
	}
	p.signal(syscall.SIGKILL)
	for p.alive() {
		if err := sleepCtx(ctx, 5*time.Millisecond); err != nil {
			return fmt.Errorf("kill %d: %w", p.Pid, err)
		}
	}
	return nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}

// startProc starts cmd and reaps it in the background, so killed children
// never linger as zombies of a long-running test binary; reaped is done
// when the reaper returns, so Close can wait for its goroutines.
func startProc(cmd *exec.Cmd, detach bool, reaped *sync.WaitGroup) (procRef, error) {
	if detach {
		// Own session: no terminal signals, survives the starting command.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	}
	if err := cmd.Start(); err != nil {
		return procRef{}, err
	}
	ref, err := refOf(cmd.Process.Pid)
	reaped.Add(1)
	go func() {
		defer reaped.Done()
		_ = cmd.Wait()
	}()
	if err != nil {
		return procRef{}, fmt.Errorf("process %s exited at once: %w", cmd.Path, err)
	}
	return ref, nil
}

// pidsByMntNS maps every mount namespace to the processes in it.
func pidsByMntNS() map[string][]int {
	ents, _ := os.ReadDir("/proc")
	out := map[string][]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if l, err := os.Readlink(filepath.Join("/proc", e.Name(), "ns/mnt")); err == nil {
			out[l] = append(out[l], pid)
		}
	}
	return out
}

func killAll(ctx context.Context, refs []procRef) error {
	var errs []error
	for _, r := range refs {
		r.signal(syscall.SIGTERM)
	}
	for _, r := range refs {
		if err := r.kill(ctx, 2*time.Second); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// writeJSON writes v to path atomically.
func writeJSON(path string, v any, perm os.FileMode) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), perm); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("parse %s: %w", path, err)
	}
	return nil
}
