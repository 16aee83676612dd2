package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// logRun runs salt-ssh -r 'nomatch*' true (Salt logs "No
// matching targets found in roster." at error and exits 0) with a master
// config and flags, returning the exit code and stderr.
func logRun(t *testing.T, dir, master string, flags ...string) (int, string) {
	return logRunOn(t, dir, "nomatch*", master, flags...)
}

func logRunOn(t *testing.T, dir, tgt, master string, flags ...string) (int, string) {
	t.Helper()
	// h refuses connections: a run on it logs at debug.
	if err := os.WriteFile(filepath.Join(dir, "roster"), []byte("h:\n  host: 127.0.0.1\n  port: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	conf := "pki_dir: " + dir + "/pki\ncachedir: " + dir + "/cache\nroster_file: " + dir + "/roster\n" + master
	if err := os.WriteFile(filepath.Join(dir, "master"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), append(append([]string{"-c", dir, "-r"}, flags...), tgt, "true"), nil, &stdout, &stderr)
	return code, stderr.String()
}

func readLog(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no log file: %v", err)
	}
	return string(b)
}

// saltLine is one record in Salt's default log file format.
var saltLine = `\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} \[[a-z.-]+ *:\d+ *\]\[%s\]\[\d+\] %s`

// TestLogFile: salt-ssh writes Salt's salt-ssh log (ssh_log_file, under
// root_dir, default /var/log/salt/ssh) at log_level_logfile, else
// log_level, in log_fmt_logfile; --log-file and --log-file-level win.
func TestLogFile(t *testing.T) {
	t.Run("default path under root_dir, level warning", func(t *testing.T) {
		dir := t.TempDir()
		code, _ := logRun(t, dir, "root_dir: "+dir+"\n")
		log := readLog(t, filepath.Join(dir, "var/log/salt/ssh"))
		if code != 0 || !regexp.MustCompile(`^`+fmt.Sprintf(saltLine, `ERROR   `, `No matching targets found in roster\.`)+`\n$`).MatchString(log) {
			t.Errorf("exit %d, log:\n%s", code, log)
		}
	})
	t.Run("ssh_log_file, log_level_logfile, log_fmt_logfile", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "logs", "salt-ssh.log")
		master := "ssh_log_file: " + path + "\nlog_level_logfile: debug\nlog_fmt_logfile: '%(levelname)s %(asctime)s %(message)s'\nlog_datefmt_logfile: 'at %H'\n"
		logRun(t, dir, master)
		logRunOn(t, dir, "h", master)
		log := readLog(t, path)
		if !regexp.MustCompile(`(?m)^ERROR at \d\d No matching targets found in roster\.\n(.*\n)*DEBUG at \d\d connect failed host=h`).MatchString(log) {
			t.Errorf("log:\n%s", log)
		}
	})
	t.Run("log_level applies to the file and the console", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "ssh.log")
		_, stderr := logRun(t, dir, "ssh_log_file: "+path+"\nlog_level: critical\n")
		if log := readLog(t, path); log != "" || stderr != "" {
			t.Errorf("log_level critical: log %q, stderr %q", log, stderr)
		}
	})
	t.Run("flags win", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "cli.log")
		logRunOn(t, dir, "h", "ssh_log_file: "+filepath.Join(dir, "conf.log")+"\nlog_level_logfile: error\n",
			"--log-file", path, "--log-file-level", "debug", "-l", "quiet")
		if log := readLog(t, path); !strings.Contains(log, "[DEBUG   ]") {
			t.Errorf("--log-file-level debug:\n%s", log)
		}
		if _, err := os.Stat(filepath.Join(dir, "conf.log")); err == nil {
			t.Error("ssh_log_file written although --log-file was given")
		}
	})
	t.Run("a file that cannot be opened is a warning", func(t *testing.T) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "plain"), nil, 0o600)
		code, stderr := logRun(t, dir, "ssh_log_file: "+filepath.Join(dir, "plain", "ssh")+"\n")
		if code != 0 || !strings.Contains(stderr, "[WARNING ] Failed to open log file, do you have permission to write to "+filepath.Join(dir, "plain", "ssh")+"?") {
			t.Errorf("exit %d, stderr:\n%s", code, stderr)
		}
		code, stderr = logRun(t, dir, "ssh_log_file: udp://localhost:514/LOG_USER\n")
		if code != 0 || !strings.Contains(stderr, "syslog destination") {
			t.Errorf("exit %d, stderr:\n%s", code, stderr)
		}
	})
	t.Run("config warnings reach the file", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "ssh.log")
		logRun(t, dir, "ssh_log_file: "+path+"\nnot_an_option: 1\n")
		if log := readLog(t, path); !strings.Contains(log, "keeping options Brine does not use") {
			t.Errorf("log:\n%s", log)
		}
	})
	t.Run("bad --log-file-level", func(t *testing.T) {
		dir := t.TempDir()
		if code, stderr := logRun(t, dir, "ssh_log_file: "+dir+"/x\n", "--log-file-level", "loud"); code == 0 || !strings.Contains(stderr, "unknown log level") {
			t.Errorf("exit %d, stderr:\n%s", code, stderr)
		}
	})
}
