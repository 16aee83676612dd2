package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/version"
)

// procs drives real salt-master and salt-minion processes on loopback
// with the real salt, salt-run and salt-call binaries.
type procs struct {
	t   *testing.T
	bin string
	dir string
}

// tool runs one of the built commands and returns its stdout.
func (p *procs) tool(name string, args ...string) (string, int) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(p.bin, name), args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		p.t.Logf("%s %v: exit %d: %s", name, args, ee.ExitCode(), stderr.String())
		return string(out), ee.ExitCode()
	case err != nil:
		p.t.Fatalf("%s %v: %v", name, args, err)
	}
	return string(out), 0
}

// jsonOut runs a command with --out json and decodes its output.
func (p *procs) jsonOut(name string, args ...string) any {
	p.t.Helper()
	out, code := p.tool(name, append(args, "--out", "json")...)
	var v any
	if err := json.Unmarshal([]byte(out), &v); err != nil || code != 0 {
		p.t.Fatalf("%s %v: exit %d, %v: %s", name, args, code, err, out)
	}
	return v
}

// daemon starts a long-running command, stopped with SIGINT when the
// test ends; its log is shown when the test failed.
func (p *procs) daemon(name string, args ...string) {
	log, err := os.Create(filepath.Join(p.dir, strings.ReplaceAll(name, " ", "-")+".log"))
	if err != nil {
		p.t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(p.bin, strings.Fields(name)[0]), args...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	p.t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
		log.Close()
		if p.t.Failed() {
			b, _ := os.ReadFile(log.Name())
			p.t.Logf("--- %s ---\n%s", name, b)
		}
	})
}

func write(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func inode(t *testing.T, path string) uint64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Sys().(*syscall.Stat_t).Ino
}

// startProcs writes the master's file and pillar trees, starts the
// master and minions m1 and m2, and waits until both answer.
func startProcs(t *testing.T) *procs {
	p := &procs{t: t, bin: t.TempDir(), dir: t.TempDir()}
	out, err := exec.Command("go", "build", "-o", p.bin+"/", "github.com/brinesalt/brine/cmd/salt-master",
		"github.com/brinesalt/brine/cmd/salt-minion", "github.com/brinesalt/brine/cmd/salt",
		"github.com/brinesalt/brine/cmd/salt-run", "github.com/brinesalt/brine/cmd/salt-call").CombinedOutput()
	if err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	dir := p.dir
	pub, ret := freePort(t), freePort(t)
	write(t, dir+"/master/master", fmt.Sprintf("interface: 127.0.0.1\npublish_port: %d\nret_port: %d\npki_dir: %s/mpki\n"+
		"cachedir: %s/mcache\nsock_dir: %s/msock\nfile_roots: {base: [%s/srv]}\npillar_roots: {base: [%s/pillar]}\n"+
		"auto_accept: True\ntimeout: 5\n", pub, ret, dir, dir, dir, dir, dir))
	write(t, dir+"/srv/web.sls", "motd:\n  file.managed:\n    - name: "+dir+"/out/{{ grains['id'] }}\n    - makedirs: True\n"+
		"    - source: salt://files/motd\n    - template: jinja\n")
	write(t, dir+"/srv/files/motd", "site {{ pillar['site'] }}\n")
	write(t, dir+"/pillar/top.sls", "base:\n  m1:\n    - m1\n  m2:\n    - m2\n")
	write(t, dir+"/pillar/m1.sls", "site: one.example\n")
	write(t, dir+"/pillar/m2.sls", "site: two.example\n")
	p.daemon("salt-master", "-c", dir+"/master", "-l", "info")
	for _, id := range []string{"m1", "m2"} {
		write(t, dir+"/"+id+"/minion", fmt.Sprintf("master: 127.0.0.1\nmaster_port: %d\npublish_port: %d\nid: %s\n"+
			"pki_dir: %s/%s/pki\ncachedir: %s/%s/cache\nacceptance_wait_time: 0.5\ngrains: {role: %s}\n",
			ret, pub, id, dir, id, dir, id, id))
		p.daemon("salt-minion "+id, "-c", dir+"/"+id, "-l", "info")
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(dir + "/msock/brine-master.sock"); err == nil {
			if up := fmt.Sprint(p.jsonOut("salt-run", "-c", dir+"/master", "manage.up")); up == "[m1 m2]" {
				return p
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("minions m1 and m2 never both answered")
		}
		time.Sleep(300 * time.Millisecond)
	}
}

func TestProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemons")
	}
	p := startProcs(t)
	mc := []string{"-c", p.dir + "/master"}

	t.Run("manage.versions", func(t *testing.T) {
		v := p.jsonOut("salt-run", append(mc, "manage.versions")...).(map[string]any)
		up, _ := v["Up to date"].(map[string]any)
		if v["Master"] != version.Salt || len(v) != 2 || up["m1"] != version.Salt || up["m2"] != version.Salt {
			t.Fatalf("manage.versions = %v", v)
		}
	})
	t.Run("cache.grains and cache.pillar", func(t *testing.T) {
		g := p.jsonOut("salt-run", append(mc, "cache.grains", "role:m2", "tgt_type=grain")...).(map[string]any)
		if len(g) != 1 || g["m2"].(map[string]any)["role"] != "m2" {
			t.Fatalf("cache.grains = %v", g)
		}
		pl := p.jsonOut("salt-run", append(mc, "cache.pillar", "m1,m2", "tgt_type=list")...).(map[string]any)
		if fmt.Sprint(pl) != "map[m1:map[site:one.example] m2:map[site:two.example]]" {
			t.Fatalf("cache.pillar = %v", pl)
		}
	})
	t.Run("state.apply from the master, cached", func(t *testing.T) {
		apply := func() {
			t.Helper()
			if out, code := p.tool("salt", append(mc, "m1", "state.apply", "web")...); code != 0 || !strings.Contains(out, "Succeeded: 1") {
				t.Fatalf("salt m1 state.apply web: exit %d\n%s", code, out)
			}
		}
		apply()
		if b, _ := os.ReadFile(p.dir + "/out/m1"); string(b) != "site one.example\n" {
			t.Fatalf("managed file holds %q", b)
		}
		cached := p.dir + "/m1/cache/files/base/files/motd"
		before := inode(t, cached)
		apply()
		if inode(t, cached) != before {
			t.Fatal("the second run fetched the unchanged source again")
		}
	})
	t.Run("jobs.print_job", func(t *testing.T) {
		jobs := p.jsonOut("salt-run", append(mc, "jobs.list_jobs")...).(map[string]any)
		var jids []string
		for jid, j := range jobs {
			if j.(map[string]any)["Function"] == "state.apply" {
				jids = append(jids, jid)
			}
		}
		slices.Sort(jids)
		if len(jids) != 2 {
			t.Fatalf("list_jobs has %d state.apply jobs: %v", len(jids), jobs)
		}
		pj := p.jsonOut("salt-run", append(mc, "jobs.print_job", jids[1])...).(map[string]any)
		job, _ := pj[jids[1]].(map[string]any)
		res, _ := job["Result"].(map[string]any)
		m1, _ := res["m1"].(map[string]any)
		if job["Target"] != "m1" || m1 == nil || m1["out"] != "highstate" || m1["retcode"] != float64(0) {
			t.Fatalf("jobs.print_job = %v", pj)
		}
	})
	t.Run("salt-call pillar.items", func(t *testing.T) {
		for id, site := range map[string]string{"m1": "one.example", "m2": "two.example"} {
			got := p.jsonOut("salt-call", "-c", p.dir+"/"+id, "pillar.items").(map[string]any)
			if fmt.Sprint(got["local"]) != "map[site:"+site+"]" {
				t.Fatalf("salt-call pillar.items on %s = %v", id, got)
			}
		}
	})
}
