package promote

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
)

const (
	unitPath   = "/etc/systemd/system/salt-minion.service"
	initScript = "/etc/init.d/salt-minion"
	// PIDFile is where the SysV script records the daemon.
	PIDFile = "/run/salt/salt-minion.pid"
	// LogFile receives the daemon's log under SysV.
	LogFile = "/var/log/salt/minion"
)

// detectInit is sd_booted(): systemd runs when /run/systemd/system is a
// directory; anything else gets the SysV script.
func detectInit(root string) string {
	if st, err := os.Stat(filepath.Join(root, "/run/systemd/system")); err == nil && st.IsDir() {
		return "systemd"
	}
	return "sysv"
}

// unit is the systemd service, as Salt's packaged salt-minion.service
// (pkg/common/salt-minion.service) with Brine's binary.
func unit(bin string) string {
	return fmt.Sprintf(`[Unit]
Description=The Salt Minion (Brine)
Documentation=man:salt-minion(1)
After=network.target

[Service]
KillMode=process
Type=simple
LimitNOFILE=8192
ExecStart=%s -c %s
Restart=on-failure
RestartSec=5

[Install]
WantedBy=multi-user.target
`, bin, ConfigDir)
}

// sysvScript is an LSB init script with start, stop, restart and status.
// The daemon runs in its own session, its output in LogFile, so the SSH
// session that started it can end.
func sysvScript(bin, pidFile, logFile string) string {
	return fmt.Sprintf(`#!/bin/sh
### BEGIN INIT INFO
# Provides:          salt-minion
# Required-Start:    $remote_fs $network
# Required-Stop:     $remote_fs $network
# Default-Start:     2 3 4 5
# Default-Stop:      0 1 6
# Short-Description: The Salt Minion (Brine)
### END INIT INFO
DAEMON=%[1]s
PIDFILE=%[2]s
LOG=%[3]s

running() {
	[ -r "$PIDFILE" ] || return 1
	pid=$(cat "$PIDFILE")
	[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && grep -q salt-minion "/proc/$pid/cmdline" 2>/dev/null
}

start() {
	running && return 0
	mkdir -p "$(dirname "$PIDFILE")" "$(dirname "$LOG")"
	setsid "$DAEMON" -c %[4]s -l info </dev/null >>"$LOG" 2>&1 &
	echo $! >"$PIDFILE"
	sleep 0.2
	running
}

stop() {
	running || { rm -f "$PIDFILE"; return 0; }
	pid=$(cat "$PIDFILE")
	kill -TERM "$pid"
	i=0
	while kill -0 "$pid" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
	kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
	rm -f "$PIDFILE"
	return 0
}

case "$1" in
	start) start ;;
	stop) stop ;;
	restart|force-reload) stop; start ;;
	status) running ;;
	*) echo "usage: $0 {start|stop|restart|status}" >&2; exit 2 ;;
esac
`, bin, pidFile, logFile, ConfigDir)
}

// service installs the unit or script, enables it at boot and makes sure
// the minion runs: restarted when restart is set (something it reads
// changed) or started when it is not running.
func service(ctx context.Context, l layout, restart bool) []Step {
	file, text, ctl := l.path(initScript), sysvScript(l.Bin, PIDFile, LogFile), sysvCtl
	if l.Init == "systemd" {
		file, text, ctl = l.path(unitPath), unit(l.Bin), systemdCtl
	}
	if l.Repo != "" {
		// The package installed its own unit and init script.
		return ctl(ctx, false, restart)
	}
	s := Step{ID: "service file", Name: file, Result: true}
	mode := os.FileMode(0o644)
	if l.Init == "sysv" {
		mode = 0o755
	}
	ch, err := writeFile(file, []byte(text), mode)
	s.Result, s.Comment = err == nil, describe(file, ch, err)
	if ch {
		s.Changes = ordered.FromPairs(file, "updated")
	}
	if err != nil {
		return []Step{s}
	}
	return append([]Step{s}, ctl(ctx, ch, restart)...)
}

func sh(ctx context.Context, script string) (string, error) {
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", script)
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return strings.TrimSpace(out.String()), err
}

func ran(id, name, comment string, changed bool, out string, err error) Step {
	s := Step{ID: id, Name: name, Result: err == nil, Comment: comment}
	if err != nil {
		s.Comment = fmt.Sprintf("%s failed: %s: %s", comment, err.Error(), out)
		return s
	}
	if changed {
		s.Changes = ordered.FromPairs(name, comment)
	}
	return s
}

func sysvCtl(ctx context.Context, fileChanged, restart bool) []Step {
	var steps []Step
	// Enabled at boot: update-rc.d (Debian) or chkconfig (Red Hat), when
	// the host has one; the links they make are the enablement. A script
	// already registered but disabled (as the salt-minion package leaves
	// it: K links only) is enabled.
	if _, err := os.Stat("/etc/rc2.d"); err == nil {
		links, _ := filepath.Glob("/etc/rc2.d/S*salt-minion")
		if len(links) == 0 || fileChanged {
			out, err := sh(ctx, "if command -v update-rc.d >/dev/null; then update-rc.d salt-minion defaults && update-rc.d salt-minion enable; "+
				"elif command -v chkconfig >/dev/null; then chkconfig --add salt-minion && chkconfig salt-minion on; fi")
			steps = append(steps, ran("enabled", "salt-minion", "enabled at boot", true, out, err))
		} else {
			steps = append(steps, Step{ID: "enabled", Name: "salt-minion", Result: true, Comment: "already enabled at boot"})
		}
	}
	if _, err := sh(ctx, initScript+" status"); err == nil && !restart && !fileChanged {
		return append(steps, Step{ID: "running", Name: "salt-minion", Result: true, Comment: "the minion is running"})
	}
	// A minion that dies at once (a bad config, say) fails the start;
	// the end of its log says why.
	out, err := sh(ctx, initScript+" restart || { tail -n 5 "+LogFile+"; exit 1; }")
	return append(steps, ran("running", "salt-minion", "restarted", true, out, err))
}

func systemdCtl(ctx context.Context, fileChanged, restart bool) []Step {
	var steps []Step
	if fileChanged {
		out, err := sh(ctx, "systemctl daemon-reload")
		steps = append(steps, ran("daemon-reload", "salt-minion", "systemd reloaded", true, out, err))
	}
	if _, err := sh(ctx, "systemctl is-enabled --quiet salt-minion"); err != nil {
		out, err := sh(ctx, "systemctl enable salt-minion")
		steps = append(steps, ran("enabled", "salt-minion", "enabled at boot", true, out, err))
	}
	if _, err := sh(ctx, "systemctl is-active --quiet salt-minion"); err == nil && !restart && !fileChanged {
		return append(steps, Step{ID: "running", Name: "salt-minion", Result: true, Comment: "the minion is running"})
	}
	out, err := sh(ctx, "systemctl restart salt-minion")
	return append(steps, ran("running", "salt-minion", "restarted", true, out, err))
}
