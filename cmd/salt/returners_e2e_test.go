package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/testsupport/clustertest"
)

// returnerConf is m1's returner settings: the default rawfile_json file
// and an "alt" profile chosen with --return_config. Salt looks the
// profile up with config.option, which reads flat keys only.
func returnerConf(dir string) string {
	return "rawfile_json.filename: " + filepath.Join(dir, "events-m1") + "\n" +
		"alt.rawfile_json.filename: " + filepath.Join(dir, "events-alt") + "\n"
}

// jsonLines reads a rawfile_json file.
func jsonLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	// Only whole lines: the file may be read between the returner's
	// create and its write (polled by WaitFor).
	text := string(b)
	text = text[:strings.LastIndexByte(text, '\n')+1]
	var out []map[string]any
	for _, l := range strings.Split(text, "\n") {
		if l == "" {
			continue
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("%s: line %q: %v", path, l, err)
		}
		out = append(out, v)
	}
	return out
}

func testReturners(t *testing.T, c *clustertest.Cluster) {
	t.Run("rawfile_json from the minion config", func(t *testing.T) {
		out, code := c.Run("salt", "m1", "test.echo", "returned", "--return", "rawfile_json")
		if code != 0 || !strings.Contains(out, "m1:\n    returned") {
			t.Fatalf("salt --return: %d\n%s", code, out)
		}
		var lines []map[string]any
		c.WaitFor("rawfile_json line", func() bool {
			lines = jsonLines(t, filepath.Join(c.Dir, "events-m1"))
			return len(lines) == 1
		})
		l := lines[0]
		if l["id"] != "m1" || l["return"] != "returned" || l["fun"] != "test.echo" || l["success"] != true ||
			!regexp.MustCompile(`^\d{20}$`).MatchString(l["jid"].(string)) {
			t.Fatalf("rawfile_json line: %v", l)
		}
	})
	t.Run("return_config and return_kwargs", func(t *testing.T) {
		c.Run("salt", "m1", "test.echo", "alt", "--return", "rawfile_json", "--return_config", "alt")
		c.WaitFor("alt line", func() bool { return len(jsonLines(t, filepath.Join(c.Dir, "events-alt"))) == 1 })
		kwFile := filepath.Join(c.Dir, "events-kw")
		c.Run("salt", "*", "test.echo", "kw", "--return", "rawfile_json", "--return_kwargs", "{filename: "+kwFile+"}")
		c.WaitFor("both minions in the ret_kwargs file", func() bool {
			lines := jsonLines(t, kwFile)
			return len(lines) == 2 && lines[0]["id"] != lines[1]["id"]
		})
		if n := len(jsonLines(t, filepath.Join(c.Dir, "events-m1"))); n != 1 {
			t.Fatalf("events-m1 has %d lines, want the first test's 1", n)
		}
	})
	t.Run("syslog and rawfile_json together; unknown returner does not block", func(t *testing.T) {
		sock, ch := clustertest.SyslogListener(t)
		kwFile := filepath.Join(c.Dir, "events-both")
		out, code := c.Run("salt", "m2", "test.echo", "to-syslog", "--return", "syslog,nosuch,rawfile_json",
			"--return_kwargs", "{socket: "+sock+", tag: brine-test, facility: LOG_LOCAL2, filename: "+kwFile+"}")
		if code != 0 || !strings.Contains(out, "m2:\n    to-syslog") {
			t.Fatalf("salt: %d\n%s", code, out)
		}
		select {
		case msg := <-ch:
			// LOG_LOCAL2 (18) * 8 + LOG_INFO (6).
			if !strings.HasPrefix(msg, "<150>") || !strings.Contains(msg, " brine-test[") ||
				!strings.Contains(msg, `"return": "to-syslog"`) || !strings.Contains(msg, `"id": "m2"`) {
				t.Fatalf("syslog message: %q", msg)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("no syslog message; m2 log:\n%s", c.Logs["m2"])
		}
		c.WaitFor("rawfile_json after the failed returner", func() bool { return len(jsonLines(t, kwFile)) == 1 })
		// The minion logs the returners' errors once all have run, so
		// after rawfile_json wrote its line.
		c.WaitFor("the unknown returner logged", func() bool {
			return strings.Contains(c.Logs["m2"].String(), "nosuch.returner could not be loaded")
		})
	})
}

func testProgress(t *testing.T, c *clustertest.Cluster) {
	out, code := c.Run("salt", "*", "test.ping", "-p")
	bar := regexp.MustCompile(`100% \|#+\| Elapsed Time: \d+:\d\d:\d\d Returns: \[2/2\]\n`)
	if code != 0 || !bar.MatchString(out) || !strings.Contains(out, "  0% |") ||
		!strings.Contains(out, "# of minions targeted: 2\n# of minions returned: 2\n") {
		t.Fatalf("salt -p: %d\n%q", code, out)
	}
	if strings.Contains(out, "m1:\n    True") {
		t.Errorf("salt -p printed the returns, Salt prints only the bar and the summary:\n%s", out)
	}
	out, _ = c.Run("salt", "*", "test.retcode", "3", "-p", "-v")
	if !strings.Contains(out, "# of minions with errors: 2\n") || !strings.Contains(out, "Minions with failures: m1 m2\n") {
		t.Fatalf("salt -p -v with failures:\n%s", out)
	}
}

func testSubset(t *testing.T, c *clustertest.Cluster) {
	seen := map[string]bool{}
	for range 12 {
		out, code := c.Run("salt", "*", "test.ping", "--subset", "1")
		n := strings.Count(out, ":\n    True")
		if code != 0 || n != 1 {
			t.Fatalf("--subset 1 answered %d:\n%s", n, out)
		}
		seen[strings.SplitN(out, ":", 2)[0]] = true
	}
	if len(seen) != 2 {
		// 12 draws of 1 in 2 all equal: probability 2^-11.
		t.Errorf("--subset never picked another minion: %v", seen)
	}
	out, _ := c.Run("salt", "*", "test.ping", "--subset", "5")
	if strings.Count(out, ":\n    True") != 2 {
		t.Errorf("--subset 5 of 2:\n%s", out)
	}
	out, code := c.Run("salt", "*", "no.such_function", "--subset", "1")
	if code != 2 || !strings.Contains(out, "No minions matched the target") {
		t.Errorf("--subset with a function no minion has: %d\n%s", code, out)
	}
}
