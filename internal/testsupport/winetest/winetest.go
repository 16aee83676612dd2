//go:build !windows

// Package winetest runs Windows builds of Brine under Wine for tests: a
// Wine prefix in a temporary directory, the ProcessPrng shim DLL Go's
// runtime needs on Debian 12's Wine 8.0 (built here with mingw-w64), and
// a private network namespace with only a loopback interface, so what
// the Windows code sees of the network is the test's own and not the
// host's (Wine enumerates every host interface, which is slow and
// machine-dependent). Everything that talks to a Windows process —
// wine itself, a master it signs in to — runs in that namespace.
//
// Results under Wine are Wine's: docs/WINDOWS.md says what was tested
// where.
package winetest

import (
	"bufio"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

//go:embed shim/bcryptprimitives.c
var shimSource []byte

//go:embed shim/bcryptprimitives.def
var shimDef []byte

// Tools are the programs the harness needs, by what they are for.
var Tools = map[string]string{
	"wine":                   "runs the Windows binaries (Debian package wine64)",
	"wineboot":               "creates the Wine prefix (wine64)",
	"wineserver":             "stops the prefix's Wine processes (wine64)",
	"x86_64-w64-mingw32-gcc": "builds the ProcessPrng shim DLL (gcc-mingw-w64-x86-64)",
	"unshare":                "makes the private network namespace (util-linux)",
	"nsenter":                "runs commands in it (util-linux)",
	"ip":                     "brings its loopback up (iproute2)",
}

// Missing says which tool is missing, or whether this process may not
// make network namespaces (root), "" when the harness can run.
func Missing() string {
	for tool, why := range Tools {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Sprintf("no %s on PATH (%s)", tool, why)
		}
	}
	if os.Geteuid() != 0 {
		return "not root: a private network namespace needs CAP_SYS_ADMIN"
	}
	return ""
}

// Wine is a started prefix with its network namespace.
type Wine struct {
	// Prefix is WINEPREFIX; its drive_c is C:.
	Prefix string
	// Display is the Xvfb display (":N") every Wine program gets, "" when
	// the prefix was started without one.
	Display string
	// BootLog is the file the prefix's boot wrote to; the service
	// manager it started (services.exe) and the services it starts
	// inherit it as their standard output and error.
	BootLog string
	holder  *exec.Cmd
	xvfb    *exec.Cmd
	netns   string
}

// Option changes how Start sets the prefix up.
type Option func(*Wine) error

// WithXvfb starts an X server (Xvfb) in the namespace before Wine boots,
// so the prefix's desktop and the windows of its programs go to it (a
// prefix booted without a display never shows windows).
func WithXvfb() Option { return (*Wine).startXvfb }

// Start makes a prefix under dir (which must exist and be empty or
// new), installs the shim into its system32 and starts the network
// namespace. The caller ends it with Close.
func Start(ctx context.Context, dir string, opts ...Option) (*Wine, error) {
	if why := Missing(); why != "" {
		return nil, errors.New("winetest: " + why)
	}
	w := &Wine{Prefix: filepath.Join(dir, "prefix")}
	if err := w.startNetns(ctx); err != nil {
		return nil, err
	}
	for _, o := range opts {
		if err := o(w); err != nil {
			w.Close()
			return nil, err
		}
	}
	dll, err := buildShim(ctx, filepath.Join(dir, "shim"))
	if err != nil {
		w.Close()
		return nil, err
	}
	if err := w.boot(ctx, dir); err != nil {
		w.Close()
		return nil, err
	}
	sys32 := filepath.Join(w.Prefix, "drive_c", "windows", "system32")
	b, err := os.ReadFile(dll)
	if err == nil {
		err = os.WriteFile(filepath.Join(sys32, "bcryptprimitives.dll"), b, 0o644)
	}
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("winetest: install shim: %w", err)
	}
	return w, nil
}

// boot creates the prefix (wineboot -i), then restarts its wineserver
// (persistent until Close) and boots it again. The restart is what makes
// the prefix's service manager one process: under a persistent
// wineserver, Wine 8.0's `wineboot -i` leaves two services.exe of the
// prefix running (one from the start of the boot, one from its end;
// counted with ps), each with its own service database in memory and
// both serving the svcctl pipe, so a service one of them created
// (`salt-minion.exe install`) was unknown to the other ("Service does
// not exist" from OpenService, or "Service database locked" while the
// second one autostarted). A plain `wineboot` of the created prefix
// starts one. The commands write to a log file rather than a pipe: the
// Wine processes they start (wineserver, services.exe, …) outlive them
// and would hold a pipe open, so a later reader would never see its end.
func (w *Wine) boot(ctx context.Context, dir string) error {
	if err := os.MkdirAll(w.Prefix, 0o755); err != nil {
		return fmt.Errorf("winetest: %w", err)
	}
	logPath := filepath.Join(dir, "wineboot.log")
	w.BootLog = logPath
	log, err := os.Create(logPath)
	if err != nil {
		return fmt.Errorf("winetest: %w", err)
	}
	defer log.Close()
	steps := [][]string{{"wineserver", "-p"}, {"wineboot", "-i"},
		{"wineserver", "-k"}, {"wineserver", "-w"}, {"wineserver", "-p"}, {"wineboot"}}
	for _, args := range steps {
		cmd := w.Linux(ctx, args[0], args[1:]...)
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Run(); err != nil {
			out, _ := os.ReadFile(logPath)
			return fmt.Errorf("winetest: %s: %w\n%s", strings.Join(args, " "), err, out)
		}
	}
	return nil
}

// startNetns starts the process that holds the namespace: unshare with
// a fresh network namespace, loopback up, then sleeping until Close.
func (w *Wine) startNetns(ctx context.Context) error {
	cmd := exec.CommandContext(ctx, "unshare", "--net", "--", "sh", "-c", "ip link set lo up && echo up && exec sleep 86400")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("winetest: netns: %w", err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("winetest: netns: %w", err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "up" {
		cmd.Process.Kill()
		cmd.Wait()
		return fmt.Errorf("winetest: netns: loopback did not come up (%q): %v", line, err)
	}
	w.holder = cmd
	w.netns = "/proc/" + strconv.Itoa(cmd.Process.Pid) + "/ns/net"
	return nil
}

func (w *Wine) startXvfb() error {
	if _, err := exec.LookPath("Xvfb"); err != nil {
		return errors.New("winetest: no Xvfb on PATH (Debian xvfb)")
	}
	r, wr, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("winetest: xvfb: %w", err)
	}
	defer r.Close()
	cmd := exec.Command("nsenter", "--net="+w.netns, "--", "Xvfb", "-displayfd", "3", "-screen", "0", "1024x768x24", "-nolisten", "tcp")
	cmd.ExtraFiles = []*os.File{wr}
	if err := cmd.Start(); err != nil {
		wr.Close()
		return fmt.Errorf("winetest: xvfb: %w", err)
	}
	wr.Close()
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil || strings.TrimSpace(line) == "" {
		cmd.Process.Kill()
		cmd.Wait()
		return fmt.Errorf("winetest: Xvfb gave no display number: %v", err)
	}
	w.xvfb, w.Display = cmd, ":"+strings.TrimSpace(line)
	return nil
}

// buildShim compiles the shim DLL into dir.
func buildShim(ctx context.Context, dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("winetest: shim: %w", err)
	}
	src, def, dll := filepath.Join(dir, "bcryptprimitives.c"), filepath.Join(dir, "bcryptprimitives.def"), filepath.Join(dir, "bcryptprimitives.dll")
	if err := os.WriteFile(src, shimSource, 0o644); err != nil {
		return "", fmt.Errorf("winetest: shim: %w", err)
	}
	if err := os.WriteFile(def, shimDef, 0o644); err != nil {
		return "", fmt.Errorf("winetest: shim: %w", err)
	}
	cc := exec.CommandContext(ctx, "x86_64-w64-mingw32-gcc", "-shared", "-O2", "-s", "-o", dll, src, def, "-ladvapi32")
	if out, err := cc.CombinedOutput(); err != nil {
		return "", fmt.Errorf("winetest: build shim: %w\n%s", err, out)
	}
	return dll, nil
}

// Env is the environment Wine programs run with: this prefix, Wine's
// debug channels off, and the Xvfb display when there is one.
func (w *Wine) Env() []string {
	env := []string{"WINEPREFIX=" + w.Prefix, "WINEDEBUG=-all", "WINEDLLOVERRIDES=mscoree,mshtml="}
	if w.Display != "" {
		env = append(env, "DISPLAY="+w.Display)
	}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "WINEPREFIX", "WINEDEBUG", "WINEDLLOVERRIDES", "DISPLAY":
			continue
		}
		env = append(env, kv)
	}
	return env
}

// Linux runs a Linux program in the namespace with the Wine environment.
func (w *Wine) Linux(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "nsenter", append([]string{"--net=" + w.netns, "--", name}, args...)...)
	cmd.Env = w.Env()
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// Command runs a Windows program (a Linux path to an .exe, or a Windows
// name Wine finds, such as cmd.exe) under wine in the namespace.
func (w *Wine) Command(ctx context.Context, exe string, args ...string) *exec.Cmd {
	return w.Linux(ctx, "wine", append([]string{exe}, args...)...)
}

// C is the Linux path of C:\<rel> in the prefix.
func (w *Wine) C(rel string) string {
	return filepath.Join(w.Prefix, "drive_c", filepath.FromSlash(strings.ReplaceAll(rel, `\`, "/")))
}

// WinPath is the Windows name of a Linux path: Wine's Z: drive is /.
func WinPath(p string) string { return "Z:" + strings.ReplaceAll(p, "/", `\`) }

// Close stops every Wine process of the prefix (wineserver -k) and the
// namespace.
func (w *Wine) Close() {
	if _, err := os.Stat(w.Prefix); err == nil && w.netns != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_ = w.Linux(ctx, "wineserver", "-k").Run()
		_ = w.Linux(ctx, "wineserver", "-w").Run()
		cancel()
	}
	if w.xvfb != nil {
		w.xvfb.Process.Kill()
		w.xvfb.Wait()
		w.xvfb = nil
	}
	if w.holder != nil {
		w.holder.Process.Kill()
		w.holder.Wait()
		w.holder = nil
	}
}
