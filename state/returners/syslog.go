//go:build !windows

package returners

import (
	"context"
	"errors"
	"fmt"
	"log/syslog"
	"os"
	"path/filepath"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/state/modules"
)

func init() { Default.Register("syslog", Syslog) }

// ErrBadSyslogOption is a level, facility, option or tag the syslog
// returner refuses, as _verify_options does.
var ErrBadSyslogOption = errors.New("bad syslog returner option")

var syslogLevels = map[string]syslog.Priority{
	"LOG_EMERG": syslog.LOG_EMERG, "LOG_ALERT": syslog.LOG_ALERT, "LOG_CRIT": syslog.LOG_CRIT,
	"LOG_ERR": syslog.LOG_ERR, "LOG_WARNING": syslog.LOG_WARNING, "LOG_NOTICE": syslog.LOG_NOTICE,
	"LOG_INFO": syslog.LOG_INFO, "LOG_DEBUG": syslog.LOG_DEBUG,
}

var syslogFacilities = map[string]syslog.Priority{
	"LOG_KERN": syslog.LOG_KERN, "LOG_USER": syslog.LOG_USER, "LOG_MAIL": syslog.LOG_MAIL,
	"LOG_DAEMON": syslog.LOG_DAEMON, "LOG_AUTH": syslog.LOG_AUTH, "LOG_SYSLOG": syslog.LOG_SYSLOG,
	"LOG_LPR": syslog.LOG_LPR, "LOG_NEWS": syslog.LOG_NEWS, "LOG_UUCP": syslog.LOG_UUCP,
	"LOG_CRON": syslog.LOG_CRON, "LOG_AUTHPRIV": syslog.LOG_AUTHPRIV, "LOG_FTP": syslog.LOG_FTP,
	"LOG_LOCAL0": syslog.LOG_LOCAL0, "LOG_LOCAL1": syslog.LOG_LOCAL1, "LOG_LOCAL2": syslog.LOG_LOCAL2,
	"LOG_LOCAL3": syslog.LOG_LOCAL3, "LOG_LOCAL4": syslog.LOG_LOCAL4, "LOG_LOCAL5": syslog.LOG_LOCAL5,
	"LOG_LOCAL6": syslog.LOG_LOCAL6, "LOG_LOCAL7": syslog.LOG_LOCAL7,
}

// syslogOptions are Python's openlog flags. Go's log/syslog always
// puts the pid in the header (LOG_PID) and connects at once
// (LOG_NDELAY); LOG_PERROR also copies the line to stderr; the rest
// only concern the C library and are accepted as Python accepts them.
var syslogOptions = map[string]bool{
	"LOG_PID": true, "LOG_CONS": true, "LOG_NDELAY": true, "LOG_ODELAY": true, "LOG_NOWAIT": true, "LOG_PERROR": true,
}

type syslogSettings struct {
	prio   syslog.Priority
	tag    string
	perror bool
	socket string
}

// Syslog is salt/returners/syslog_return.py: the return as JSON, one
// message at syslog.level (LOG_INFO) and syslog.facility (LOG_USER)
// with syslog.tag (default: the program name) to the local syslog.
// syslog.socket, a Brine addition, names a unix datagram socket to
// use instead of /dev/log. Salt logs bad options and sends nothing;
// Brine returns the error, which the minion logs.
func Syslog(_ context.Context, env *modules.Env, ret *ordered.Map) error {
	s, err := syslogConfig(Options(env, "syslog", ret, []string{"level", "facility", "tag", "options", "socket"},
		map[string]any{"level": "LOG_INFO", "facility": "LOG_USER", "options": []any{}}))
	if err != nil {
		return err
	}
	msg, err := py.JSON(ret, py.JSONOptions{Indent: -1})
	if err != nil {
		return fmt.Errorf("encode return for syslog: %w", err)
	}
	network := ""
	if s.socket != "" {
		network = "unixgram"
	}
	w, err := syslog.Dial(network, s.socket, s.prio, s.tag)
	if err != nil {
		return fmt.Errorf("open syslog: %w", err)
	}
	defer w.Close()
	if s.perror {
		fmt.Fprintf(os.Stderr, "%s: %s\n", s.tag, msg)
	}
	if _, err := w.Write([]byte(msg)); err != nil {
		return fmt.Errorf("write syslog: %w", err)
	}
	return nil
}

// syslogConfig is _verify_options plus the lookups of the names.
func syslogConfig(o map[string]any) (syslogSettings, error) {
	var s syslogSettings
	level, lok := syslogLevels[fmt.Sprint(o["level"])]
	facility, fok := syslogFacilities[fmt.Sprint(o["facility"])]
	if !lok {
		return s, fmt.Errorf("syslog has no level %v: %w", o["level"], ErrBadSyslogOption)
	}
	if !fok {
		return s, fmt.Errorf("syslog has no facility %v: %w", o["facility"], ErrBadSyslogOption)
	}
	s.prio = level | facility
	opts, _ := o["options"].([]any)
	for _, x := range opts {
		name := fmt.Sprint(x)
		if !syslogOptions[name] {
			return s, fmt.Errorf("syslog has no option %s: %w", name, ErrBadSyslogOption)
		}
		s.perror = s.perror || name == "LOG_PERROR"
	}
	s.tag = filepath.Base(os.Args[0])
	if t, ok := o["tag"]; ok {
		ts, isStr := t.(string)
		if !isStr {
			return s, fmt.Errorf("tag must be a string: %w", ErrBadSyslogOption)
		}
		if len(ts) > 32 {
			return s, fmt.Errorf("tag size is limited to 32 characters: %w", ErrBadSyslogOption)
		}
		s.tag = ts
	}
	s.socket, _ = o["socket"].(string)
	return s, nil
}
