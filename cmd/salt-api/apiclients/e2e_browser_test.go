package apiclients

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// writeStatic copies the browser test's page (testdata/static) into
// salt-api's static directory, with the PAM credentials the page logs in
// with in creds.json (0600: salt-api, as root, serves it to the page on
// loopback; the password never reaches Chromium's argument list).
func writeStatic(t *mainT, dir string) {
	for _, f := range []string{"index.html", "app.js", "app.css"} {
		b, err := os.ReadFile(filepath.Join("testdata/static", f))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, f), b, 0o644)
	}
	creds, _ := json.Marshal(map[string]string{"username": apiUser, "password": shared.passwd[apiUser], "eauth": "pam"})
	writeFile(t, filepath.Join(dir, "creds.json"), creds, 0o600)
}

// browserReport is what the page posts to /hook/brine-browser/report.
type browserReport struct {
	CSS     string                    `json:"css"`
	Login   int                       `json:"login"`
	User    string                    `json:"user"`
	Opened  bool                      `json:"opened"`
	Run     int                       `json:"run"`
	JID     string                    `json:"jid"`
	Minions []string                  `json:"minions"`
	Tags    []string                  `json:"tags"`
	Rets    map[string]map[string]any `json:"rets"`
	Errors  []string                  `json:"errors"`
}

// TestE2EBrowserEventSource: headless Chromium opens salt-api's app at /
// (an HTML request is served the app), whose module script logs in,
// reads /events with an EventSource authenticated by the session cookie
// alone, runs a job and reports the job's events it saw.
func TestE2EBrowserEventSource(t *testing.T) {
	e := need(t)
	chromium := tool(t, "chromium", "chromium")
	events := e.events(t, e.login(t, apiUser, "pam"))

	profile := t.TempDir()
	cmd := exec.Command(chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--user-data-dir="+profile,
		"--ignore-certificate-errors", "--enable-logging=stderr", "--v=0",
		// No name resolves but loopback: Chromium reaches no host outside this machine.
		"--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", e.url+"/")
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		if t.Failed() {
			t.Logf("chromium:\n%s", consoleLines(logs.String()))
		}
	})

	ev := waitEvent(t, events, "salt/netapi/hook/brine-browser/report", 90*time.Second)
	post, _ := json.Marshal(ev.Data["post"])
	var r browserReport
	if err := json.Unmarshal(post, &r); err != nil {
		t.Fatalf("report: %v\n%s", err, post)
	}
	if len(r.Errors) > 0 {
		t.Errorf("the page saw errors: %v", r.Errors)
	}
	if r.CSS != "applied" || r.Login != 200 || r.User != apiUser || !r.Opened || r.Run != 200 {
		t.Fatalf("page: css %q (text/css?), login %d as %q, EventSource opened %v, run %d", r.CSS, r.Login, r.User, r.Opened, r.Run)
	}
	if !regexp.MustCompile(`^\d{20}$`).MatchString(r.JID) || !cmp.Equal(r.Minions, e.minions) {
		t.Fatalf("local_async: jid %q minions %v", r.JID, r.Minions)
	}
	// Salt's order for a job: the jid's own event, then new, then the returns.
	var job []string
	for _, tag := range r.Tags {
		if strings.Contains(tag, r.JID) {
			job = append(job, tag)
		}
	}
	if len(job) < 2+len(e.minions) || job[0] != r.JID || job[1] != "salt/job/"+r.JID+"/new" {
		t.Errorf("the stream's events for %s: %v, want %s, salt/job/%s/new, then the returns", r.JID, job, r.JID, r.JID)
	}
	var rets []string
	for _, tag := range job[min(2, len(job)):] {
		if id, ok := strings.CutPrefix(tag, "salt/job/"+r.JID+"/ret/"); ok {
			rets = append(rets, id)
		}
	}
	slices.Sort(rets)
	if !cmp.Equal(rets, e.minions) {
		t.Errorf("returns on the stream: %v, want %v", rets, e.minions)
	}
	for _, id := range e.minions {
		d := r.Rets[r.JID+" "+id]
		if d["id"] != id || d["return"] != true || d["fun"] != "test.ping" || d["jid"] != r.JID {
			t.Errorf("ret event of %s: %v", id, d)
		}
	}
}

// consoleLines keeps the page's console messages and load errors from
// Chromium's log, which is otherwise long.
func consoleLines(log string) string {
	var out []string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, "CONSOLE") || strings.Contains(l, "MIME") || strings.Contains(l, "Uncaught") || strings.Contains(l, "net::ERR") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
