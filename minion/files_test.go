package minion_test

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/master"
	_ "github.com/brinesalt/brine/state/modules/allmodules"
	_ "github.com/brinesalt/brine/state/states/allstates"
)

// apply runs fun on one minion through the master and returns its
// return load.
func (c *cluster) call(t *testing.T, id, fun string, args ...any) *ordered.Map {
	t.Helper()
	got, _, err := c.m.Gather(c.ctx, master.PublishRequest{Tgt: id, Fun: fun, Arg: args}, c.mo.Timeout)
	if err != nil || got[id] == nil {
		t.Fatalf("%s on %s: %v %v", fun, id, got, err)
	}
	return got[id]
}

// stateResults returns the single state's result map of a state.apply
// return.
func stateResult(t *testing.T, ret *ordered.Map) *ordered.Map {
	t.Helper()
	states, ok := ret.Value("return").(*ordered.Map)
	if !ok || states.Len() != 1 {
		t.Fatalf("state.apply returned %v", ret.Value("return"))
	}
	return states.Value(states.Keys()[0]).(*ordered.Map)
}

func inode(t *testing.T, p string) uint64 {
	t.Helper()
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return st.Sys().(*syscall.Stat_t).Ino
}

// TestStateApplyFromMaster runs state.apply on minions whose SLS, the
// salt:// source it manages and the pillar it reads all live on the
// master; the second run finds the file in the minion's cache and
// transfers nothing. cp.get_file fetches through the same client.
func TestStateApplyFromMaster(t *testing.T) {
	c := startCluster(t)
	out := t.TempDir()
	writeFiles(t, c.dir+"/srv", map[string]string{
		"web.sls":    "motd:\n  file.managed:\n    - name: {{ pillar['dest'] }}\n    - source: salt://files/motd\n",
		"files/motd": "served by the master\n",
		"top.sls":    "base:\n  web2:\n    - web\n",
	})
	writeFiles(t, c.dir+"/pillar", map[string]string{
		"top.sls":  "base:\n  web1:\n    - web1\n  web2:\n    - web2\n",
		"web1.sls": "dest: " + out + "/web1-motd\n",
		"web2.sls": "dest: " + out + "/web2-motd\n",
	})
	c.start(t, map[string]*ordered.Map{"web1": ordered.New(), "web2": ordered.New()}, nil)

	r := stateResult(t, c.call(t, "web1", "state.apply", "web"))
	if r.Value("result") != true || r.Value("changes").(*ordered.Map).Len() == 0 {
		t.Fatalf("first run: %v", r)
	}
	if b, _ := os.ReadFile(out + "/web1-motd"); string(b) != "served by the master\n" {
		t.Fatalf("managed file holds %q", b)
	}
	if _, err := os.Stat(out + "/web2-motd"); err == nil {
		t.Fatal("web2's file written by web1's run")
	}
	cached := filepath.Join(c.confs["web1"].CacheDir, "files", "base", "files", "motd")
	sls := filepath.Join(c.confs["web1"].CacheDir, "files", "base", "web.sls")
	ino, slsIno := inode(t, cached), inode(t, sls)

	r = stateResult(t, c.call(t, "web1", "state.apply", "web"))
	if r.Value("result") != true || r.Value("changes").(*ordered.Map).Len() != 0 {
		t.Fatalf("second run: %v", r)
	}
	if inode(t, cached) != ino || inode(t, sls) != slsIno {
		t.Fatal("second run transferred the unchanged files again")
	}

	writeFiles(t, c.dir+"/srv", map[string]string{"files/motd": "changed on the master\n"})
	r = stateResult(t, c.call(t, "web1", "state.apply", "web"))
	if b, _ := os.ReadFile(out + "/web1-motd"); string(b) != "changed on the master\n" || r.Value("result") != true {
		t.Fatalf("after a change on the master: %q %v", b, r)
	}
	if inode(t, cached) == ino {
		t.Fatal("changed file was not fetched again")
	}

	// A highstate reads the master's top file: web2 gets web.
	if r := stateResult(t, c.call(t, "web2", "state.apply")); r.Value("result") != true {
		t.Fatalf("highstate on web2: %v", r)
	}
	if b, _ := os.ReadFile(out + "/web2-motd"); string(b) != "changed on the master\n" {
		t.Fatalf("highstate wrote %q", b)
	}

	dest := out + "/copied"
	if ret := c.call(t, "web2", "cp.get_file", "salt://files/motd", dest); ret.Value("return") != dest {
		t.Fatalf("cp.get_file returned %v", ret.Value("return"))
	}
	if b, _ := os.ReadFile(dest); string(b) != "changed on the master\n" {
		t.Fatalf("cp.get_file wrote %q", b)
	}
	if ret := c.call(t, "web2", "cp.list_master"); fmt.Sprint(ret.Value("return")) != "[files/motd top.sls web.sls]" {
		t.Fatalf("cp.list_master returned %v", ret.Value("return"))
	}

	// pillar.items compiles afresh on the master, as Salt's does: a
	// change on the master shows without a refresh, and each minion sees
	// its own pillar only.
	writeFiles(t, c.dir+"/pillar", map[string]string{"web2.sls": "dest: elsewhere\n"})
	p, _ := c.call(t, "web2", "pillar.items").Value("return").(*ordered.Map)
	if p == nil || p.Len() != 1 || p.Value("dest") != "elsewhere" {
		t.Fatalf("pillar.items on web2 = %v", p)
	}
}
