package apiclients

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/internal/testsupport/testhosts"
	"github.com/google/go-cmp/cmp"
)

// pepper runs Debian's salt-pepper 0.5.5 with HOME and PEPPERCACHE in
// dir and no SALTAPI_* variables, so only its arguments and the rc file
// (-c) say where to go and who it is.
type pepper struct {
	e   *env
	bin string
	dir string
}

func newPepper(t *testing.T, e *env) *pepper {
	t.Helper()
	return &pepper{e: e, bin: tool(t, "salt-pepper", "salt-pepper"), dir: t.TempDir()}
}

// rc writes a pepperrc (0600) for user with eauth and returns its path:
// the password stays out of pepper's argument list.
func (p *pepper) rc(t *testing.T, user, password, eauth string) string {
	t.Helper()
	path := filepath.Join(p.dir, "pepperrc-"+user)
	conf := fmt.Sprintf("[main]\nSALTAPI_URL=%s\nSALTAPI_USER=%s\nSALTAPI_PASS=%s\nSALTAPI_EAUTH=%s\n", p.e.url, user, password, eauth)
	writeFile(t, path, []byte(conf), 0o600)
	return path
}

// run runs pepper with args and returns stdout, stderr and the exit code.
func (p *pepper) run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(p.bin, args...)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + p.dir, "PEPPERCACHE=" + filepath.Join(p.dir, "peppercache")}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("salt-pepper %v: %v", args, err)
	}
	return stdout.String(), stderr.String(), code
}

// pyDumps is pepper's print(json.dumps(v, sort_keys=True, indent=4)).
func pyDumps(t *testing.T, v any) string {
	t.Helper()
	s, err := py.JSON(v, py.JSONOptions{Indent: 4, SortKeys: true, EnsureASCII: true})
	if err != nil {
		t.Fatal(err)
	}
	return s + "\n"
}

// pingReturn is {"return": [{id: true, …}]}, what pepper prints for a
// local test.ping.
func pingReturn(ids ...string) any {
	m := ordered.New()
	for _, id := range ids {
		m.Set(id, true)
	}
	return ordered.FromPairs("return", []any{m})
}

// reprinted decodes pepper's output as JSON and prints it back as pepper
// does: the output is exactly json.dumps(sort_keys=True, indent=4) of
// what the API answered.
func reprinted(t *testing.T, out string) any {
	t.Helper()
	v, err := ordered.DecodeJSON(strings.NewReader(out))
	if err != nil {
		t.Fatalf("pepper output is not JSON: %v\n%s", err, out)
	}
	if again := pyDumps(t, v); again != out {
		t.Errorf("pepper output is not json.dumps(sort_keys=True, indent=4) of its answer:\n%s", cmp.Diff(again, out))
	}
	return v
}

func TestE2EPepperLocalTargets(t *testing.T) {
	e := need(t)
	p := newPepper(t, e)
	rc := p.rc(t, apiUser, e.passwd[apiUser], "pam")
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"glob", []string{"*", "test.ping"}, e.minions},
		{"list", []string{"-L", "m1,m3", "test.ping"}, []string{"m1", "m3"}},
		{"grain", []string{"-G", "role:web", "test.ping"}, []string{"m1", "m2"}},
		{"compound", []string{"-C", "G@role:db or L@m1", "test.ping"}, []string{"m1", "m3"}},
		{"no match", []string{"nosuchminion*", "test.ping"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, code := p.run(t, append([]string{"-c", rc}, tc.args...)...)
			if want := pyDumps(t, pingReturn(tc.want...)); code != 0 || out != want {
				t.Errorf("salt-pepper %v: exit %d, output (-want +got):\n%s\nstderr: %s", tc.args, code, cmp.Diff(want, out), stderr)
			}
		})
	}
}

// TestE2EPepperCommandLineAuto is pepper's own command line with
// credentials as flags (-u, --username, --password, -a auto: the auto
// backend takes any password, so none is a secret here).
func TestE2EPepperCommandLineAuto(t *testing.T) {
	e := need(t)
	p := newPepper(t, e)
	out, stderr, code := p.run(t, "-u", e.url, "--username", autoUser, "--password", "anything", "-a", "auto", "*", "test.ping")
	if want := pyDumps(t, pingReturn(e.minions...)); code != 0 || out != want {
		t.Errorf("salt-pepper -a auto: exit %d, output (-want +got):\n%s\nstderr: %s", code, cmp.Diff(want, out), stderr)
	}
	// The run URI: POST /token, then /run with the eauth token in the chunk.
	out, stderr, code = p.run(t, "-u", e.url, "--username", autoUser, "--password", "anything", "-a", "auto", "-r", "-L", "m2", "test.ping")
	if want := pyDumps(t, pingReturn("m2")); code != 0 || out != want {
		t.Errorf("salt-pepper -r: exit %d, output (-want +got):\n%s\nstderr: %s", code, cmp.Diff(want, out), stderr)
	}
}

func TestE2EPepperBadPassword(t *testing.T) {
	e := need(t)
	p := newPepper(t, e)
	out, stderr, code := p.run(t, "-c", p.rc(t, apiUser, "wrong-"+e.passwd[apiUser], "pam"), "*", "test.ping")
	if code != 1 || out != "" || stderr != "Pepper error: Authentication denied\n" {
		t.Errorf("wrong password: exit %d, stdout %q, stderr %q; want 1, nothing, Pepper error: Authentication denied", code, out, stderr)
	}
}

func TestE2EPepperRunnerAndWheel(t *testing.T) {
	e := need(t)
	p := newPepper(t, e)
	rc := p.rc(t, apiUser, e.passwd[apiUser], "pam")
	if _, _, code := p.run(t, "-c", rc, "-L", "m1", "test.ping"); code != 0 {
		t.Fatalf("test.ping to have a job to list: exit %d", code)
	}

	out, stderr, code := p.run(t, "-c", rc, "--client", "runner", "jobs.list_jobs")
	if code != 0 {
		t.Fatalf("--client runner jobs.list_jobs: exit %d\n%s%s", code, out, stderr)
	}
	jobs := lookup(reprinted(t, out), "return", 0)
	jm, ok := jobs.(*ordered.Map)
	if !ok || jm.Len() == 0 {
		t.Fatalf("jobs.list_jobs: return[0] = %v, want the jobs by jid", jobs)
	}
	pinged := false
	for _, jid := range jm.Keys() {
		j := lookup(jm, jid)
		for _, k := range []string{"Function", "Arguments", "Target", "Target-type", "User", "StartTime"} {
			if _, ok := j.(*ordered.Map).Get(k); !ok {
				t.Errorf("jobs.list_jobs[%s] has no %s: %v", jid, k, j)
			}
		}
		pinged = pinged || (lookup(j, "Function") == "test.ping" && lookup(j, "Target") == "m1")
	}
	if !pinged {
		t.Errorf("jobs.list_jobs does not list the test.ping to m1:\n%s", out)
	}

	out, stderr, code = p.run(t, "-c", rc, "--client", "wheel", "key.list_all")
	if code != 0 {
		t.Fatalf("--client wheel key.list_all: exit %d\n%s%s", code, out, stderr)
	}
	ret := lookup(reprinted(t, out), "return", 0)
	jid, _ := lookup(ret, "data", "jid").(string)
	if lookup(ret, "tag") != "salt/wheel/"+jid || lookup(ret, "data", "fun") != "wheel.key.list_all" ||
		lookup(ret, "data", "user") != apiUser || lookup(ret, "data", "success") != true {
		t.Errorf("wheel key.list_all: %s", out)
	}
	keys := lookup(ret, "data", "return")
	if diff := cmp.Diff([]any{"m1", "m2", "m3"}, lookup(keys, "minions")); diff != "" {
		t.Errorf("key.list_all minions (-want +got):\n%s", diff)
	}
	for _, k := range []string{"minions_pre", "minions_rejected", "minions_denied"} {
		if v := lookup(keys, k); !cmp.Equal(v, []any{}) {
			t.Errorf("key.list_all %s = %v, want []", k, v)
		}
	}
}

// TestE2EPepperFailIfIncomplete: local_async, then jobs.lookup_jid polled
// until every minion answered, printing each as a JSON string, then the
// missing ones; exit 1 only when one never answered.
func TestE2EPepperFailIfIncomplete(t *testing.T) {
	e := need(t)
	p := newPepper(t, e)
	rc := p.rc(t, apiUser, e.passwd[apiUser], "pam")
	out, stderr, code := p.run(t, "-c", rc, "--fail-if-incomplete", "-L", "m1,m2", "test.ping")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	slices.Sort(lines[:len(lines)-min(len(lines), 1)])
	want := []string{`"{m1: True}"`, `"{m2: True}"`, `"{Failed: []}"`}
	if code != 0 || !cmp.Equal(want, lines) {
		t.Errorf("--fail-if-incomplete: exit %d, output (-want +got):\n%s\nstderr: %s", code, cmp.Diff(want, lines), stderr)
	}

	// m3 down: it never answers, pepper gives up after -t and fails.
	e.stopMinion(t, "m3")
	out, stderr, code = p.run(t, "-c", rc, "--fail-if-incomplete", "-t", "5", "-L", "m1,m3", "test.ping")
	if code != 1 || !strings.HasSuffix(out, `"{m1: True}"`+"\n"+`"{Failed: ['m3']}"`+"\n") {
		t.Errorf("--fail-if-incomplete with m3 down: exit %d (want 1), output:\n%s\nstderr: %s", code, out, stderr)
	}
}

// stopMinion stops a minion until the test ends, then starts it again
// and waits until it answers.
func (e *env) stopMinion(t *testing.T, id string) {
	t.Helper()
	m := e.c.Minions[id]
	m.Process.Signal(os.Interrupt)
	m.Wait()
	t.Cleanup(func() {
		e.c.StartMinion(id, filepath.Join(e.c.Dir, "minion-"+id))
		e.c.PingUntil(id, id)
	})
}

// TestE2EPepperTokenCache: -T keeps the login in $PEPPERCACHE (0600) and
// reuses it while it is valid, so a later run needs no password; an
// expired cache logs in again.
func TestE2EPepperTokenCache(t *testing.T) {
	e := need(t)
	p := newPepper(t, e)
	good := p.rc(t, apiUser, e.passwd[apiUser], "pam")
	cache := filepath.Join(p.dir, "peppercache")
	if out, stderr, code := p.run(t, "-c", good, "-T", "-L", "m1", "test.ping"); code != 0 || out != pyDumps(t, pingReturn("m1")) {
		t.Fatalf("-T first run: exit %d\n%s%s", code, out, stderr)
	}
	st, err := os.Stat(cache)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("token cache: %v, mode %v; want 0600", err, st)
	}
	first := readCache(t, cache)
	if first.User != apiUser || first.Eauth != "pam" || first.Expire <= float64(time.Now().Unix()) || first.Token == "" {
		t.Fatalf("token cache holds %+v", first)
	}

	bad := p.rc(t, apiUser, "wrong-"+e.passwd[apiUser], "pam")
	if out, stderr, code := p.run(t, "-c", bad, "-T", "-L", "m2", "test.ping"); code != 0 || out != pyDumps(t, pingReturn("m2")) {
		t.Errorf("-T with a cached token and a wrong password: exit %d, want the cached token used\n%s%s", code, out, stderr)
	}
	if again := readCache(t, cache); again.Token != first.Token {
		t.Errorf("a valid cache was replaced: %s -> %s", first.Token, again.Token)
	}

	// An expired cache: pepper logs in again (the wrong password fails).
	expired := first
	expired.Expire = float64(time.Now().Unix())
	b, _ := json.Marshal(expired)
	writeFile(t, cache, b, 0o600)
	if _, stderr, code := p.run(t, "-c", bad, "-T", "-L", "m1", "test.ping"); code != 1 || !strings.Contains(stderr, "Authentication denied") {
		t.Errorf("-T with an expired cache and a wrong password: exit %d, stderr %q; want a new login, denied", code, stderr)
	}
}

// cached is what pepper keeps of /login's return[0].
type cached struct {
	Token  string   `json:"token"`
	Expire float64  `json:"expire"`
	Start  float64  `json:"start"`
	User   string   `json:"user"`
	Eauth  string   `json:"eauth"`
	Perms  []string `json:"perms"`
}

func readCache(t *testing.T, path string) cached {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var c cached
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatalf("token cache: %v\n%s", err, b)
	}
	return c
}

// TestE2EPepperSSH is salt-ssh through the API: pepper's ssh client
// against real sshd test hosts listed in the roster under the master's
// rosters: directory.
func TestE2EPepperSSH(t *testing.T) {
	e := need(t)
	p := newPepper(t, e)
	hosts := testhosts.New(t, 2)
	if err := hosts.WriteRoster(filepath.Join(e.rosters, "roster")); err != nil {
		t.Fatal(err)
	}
	if err := hosts.WriteKnownHosts(filepath.Join(e.conf, "known_hosts")); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := p.run(t, "-c", p.rc(t, apiUser, e.passwd[apiUser], "pam"), "--client", "ssh", "*", "test.ping")
	if code != 0 {
		t.Fatalf("--client ssh: exit %d\n%s%s", code, out, stderr)
	}
	ret, ok := lookup(reprinted(t, out), "return", 0).(*ordered.Map)
	if !ok || !cmp.Equal(ret.Keys(), []any{"host1", "host2"}) {
		t.Fatalf("--client ssh '*' test.ping: %s", out)
	}
	for _, h := range ret.Keys() {
		r := lookup(ret, h)
		if lookup(r, "return") != true || lookup(r, "retcode") != 0 || lookup(r, "id") != h || lookup(r, "fun") != "test.ping" {
			t.Errorf("--client ssh %s: %v", h, r)
		}
	}
	out, stderr, code = p.run(t, "-c", p.rc(t, apiUser, e.passwd[apiUser], "pam"), "--client", "ssh", "-L", "host2", "cmd.run", "echo via the api")
	if r := lookup(reprinted(t, out), "return", 0, "host2"); code != 0 || lookup(r, "return") != "via the api" || lookup(r, "retcode") != 0 {
		t.Errorf("--client ssh -L host2 cmd.run: exit %d\n%s%s", code, out, stderr)
	}
}

// lookup walks maps by key and lists by index; nil when a step is missing.
func lookup(v any, path ...any) any {
	for _, k := range path {
		switch x := v.(type) {
		case *ordered.Map:
			s, _ := k.(string)
			v, _ = x.Get(s)
		case []any:
			i, ok := k.(int)
			if !ok || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}
