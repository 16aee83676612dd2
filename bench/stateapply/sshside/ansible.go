package sshside

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"
)

// runCount numbers Ansible runs for their private control-path
// directories.
var runCount atomic.Int64

// Playbook is `ansible-playbook -i <inventory> -f par playbook` with
// Ansible's defaults (ControlMaster/ControlPersist, no pipelining) except
// for the interpreter, which is given instead of discovered. Host keys
// are checked against the cluster's known_hosts, as Brine does. The JSON
// callback replaces the screen output so the run's stats can be checked.
// Call CloseMasters after each run: ControlPersist leaves ssh master
// processes behind, which would make the next run warm.
func (e *Env) Playbook(par int, playbook string) (Command, string) {
	cp := filepath.Join(e.Work, "ansible-cp", strconv.FormatInt(runCount.Add(1), 10))
	args := fmt.Sprintf("-o UserKnownHostsFile=%s -o StrictHostKeyChecking=yes", e.Cluster.KnownHostsPath())
	return Command{
		Argv: []string{"ansible-playbook", "-i", e.Inventory, "-f", strconv.Itoa(par), playbook},
		Env: []string{
			"ANSIBLE_PYTHON_INTERPRETER=/usr/bin/python3",
			"ANSIBLE_SSH_COMMON_ARGS=" + args,
			"ANSIBLE_SSH_CONTROL_PATH_DIR=" + cp,
			"ANSIBLE_LOCAL_TEMP=" + filepath.Join(e.Work, "ansible-tmp"),
			"ANSIBLE_STDOUT_CALLBACK=ansible.posix.json",
			"ANSIBLE_NOCOLOR=1",
			"ANSIBLE_RETRY_FILES_ENABLED=0",
		},
		Parse: parseAnsibleStats,
	}, cp
}

// CloseMasters ends the ControlPersist ssh masters of one run, through
// their sockets (`ssh -O exit`), and removes the directory.
func CloseMasters(ctx context.Context, controlDir string) {
	socks, _ := filepath.Glob(filepath.Join(controlDir, "*"))
	for _, s := range socks {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		exec.CommandContext(cctx, "ssh", "-o", "ControlPath="+s, "-O", "exit", "master").Run()
		cancel()
	}
	os.RemoveAll(controlDir)
}

// parseAnsibleStats reads the JSON callback's per-host stats: a host is
// OK without failures or unreachability. The first failure's message
// becomes the Outcome's Note.
func parseAnsibleStats(out []byte) (Outcome, error) {
	var doc struct {
		Plays []struct {
			Tasks []struct {
				Task struct {
					Name string `json:"name"`
				} `json:"task"`
				Hosts map[string]struct {
					Failed      bool   `json:"failed"`
					Unreachable bool   `json:"unreachable"`
					Msg         any    `json:"msg"`
					Stderr      string `json:"stderr"`
				} `json:"hosts"`
			} `json:"tasks"`
		} `json:"plays"`
		Stats map[string]struct {
			Changed     int `json:"changed"`
			Failures    int `json:"failures"`
			Unreachable int `json:"unreachable"`
		} `json:"stats"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		return Outcome{}, fmt.Errorf("read ansible json output: %w: %s", err, Tail(string(out)))
	}
	var o Outcome
	for _, s := range doc.Stats {
		o.Hosts++
		o.Changed += s.Changed
		if s.Failures == 0 && s.Unreachable == 0 {
			o.HostsOK++
		}
	}
	for _, p := range doc.Plays {
		for _, t := range p.Tasks {
			for h, r := range t.Hosts {
				if (r.Failed || r.Unreachable) && o.Note == "" {
					o.Note = fmt.Sprintf("task %s on %s: %v %s", t.Task.Name, h, r.Msg, r.Stderr)
				}
			}
		}
	}
	return o, nil
}
