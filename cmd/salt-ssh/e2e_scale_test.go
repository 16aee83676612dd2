package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/testsupport/testhosts"
)

// TestE2EJSONStreamsHostByHost shows that --out json writes each host's
// document as the host finishes, not at the end of the run: host2's
// command waits for a file that the test creates only after it has read
// host1's document from salt-ssh's stdout. Were the output held back,
// host1's document would arrive only after the run's deadline had cut
// host2 off, and host2's return would be a failure.
func TestE2EJSONStreamsHostByHost(t *testing.T) {
	c := testhosts.New(t, 2)
	e := newEnv(t, c, true)
	if _, err := c.Exec(t.Context(), "host1", "touch /tmp/go"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	pr, pw := io.Pipe()
	var stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"-c", e.dir, "--out", "json", "*", "cmd.run",
			"while [ ! -e /tmp/go ]; do sleep 0.1; done; hostname"}, strings.NewReader(""), pw, &stderr)
		pw.Close()
	}()
	dec := json.NewDecoder(pr)
	var first map[string]any
	if err := dec.Decode(&first); err != nil {
		t.Fatalf("first document: %v (stderr %s)", err, stderr.String())
	}
	if first["host1"] != "host1" || len(first) != 1 {
		t.Fatalf("first document = %v, want host1's alone", first)
	}
	if _, err := c.Exec(t.Context(), "host2", "touch /tmp/go"); err != nil {
		t.Fatal(err)
	}
	var second map[string]any
	if err := dec.Decode(&second); err != nil {
		t.Fatalf("second document: %v", err)
	}
	if second["host2"] != "host2" {
		t.Errorf("second document = %v, want host2's hostname (it was released after host1's document was read)", second)
	}
	if err := dec.Decode(&second); !errors.Is(err, io.EOF) {
		t.Errorf("after two documents: %v, want the end", err)
	}
	if code := <-done; code != 0 {
		t.Errorf("exit %d, stderr %s", code, stderr.String())
	}
}

// TestE2ESummaryFailuresFirst runs --summary over a host that cannot be
// reached, one whose command fails and one that succeeds: the totals
// come first (Salt's summary block, with the hosts named), then the
// failed hosts' returns, then the good one's; with --out json the totals
// go to stderr and stdout holds only the documents.
func TestE2ESummaryFailuresFirst(t *testing.T) {
	c := testhosts.New(t, 3)
	e := newEnv(t, c, true)
	if err := c.StopHost(t.Context(), "host2"); err != nil {
		t.Fatal(err)
	}
	args := []string{"-c", e.dir, "--summary", "*", "cmd.run", "echo out-$(hostname); test $(hostname) != host3"}
	var stdout, stderr bytes.Buffer
	if code := run(t.Context(), args, strings.NewReader(""), &stdout, &stderr); code != 20 {
		t.Fatalf("exit %d, want 20; stderr %s", code, stderr.String())
	}
	out := stdout.String()
	summary := "\n\n-------------------------------------------\nSummary\n-------------------------------------------\n" +
		"# of minions targeted: 3\n# of minions returned: 2\n# of minions that did not return: 1\n# of minions with errors: 1\n" +
		"Minions not connected: host2\nMinions with failures: host3\n-------------------------------------------\n"
	if !strings.HasPrefix(out, summary) {
		t.Fatalf("output does not start with the summary:\n%s", out)
	}
	i2, i3, i1 := strings.Index(out, "host2:"), strings.Index(out, "out-host3"), strings.Index(out, "out-host1")
	if i2 < 0 || i3 < 0 || i1 < 0 || i1 < i2 || i1 < i3 {
		t.Errorf("failed hosts' returns (host2 at %d, host3 at %d) should precede host1's (%d):\n%s", i2, i3, i1, out)
	}

	stdout.Reset()
	stderr.Reset()
	args = append([]string{"--out", "json"}, args...)
	run(t.Context(), args, strings.NewReader(""), &stdout, &stderr)
	if !strings.Contains(stderr.String(), summary) {
		t.Errorf("with --out json the summary should be on stderr:\n%s", stderr.String())
	}
	dec := json.NewDecoder(&stdout)
	var order []string
	for {
		var doc map[string]any
		if err := dec.Decode(&doc); err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatalf("stdout is not JSON documents: %v\n%s", err, stdout.String())
			}
			break
		}
		for id := range doc {
			order = append(order, id)
		}
	}
	if len(order) != 3 || order[2] != "host1" {
		t.Errorf("documents in order %v, want the failed hosts then host1", order)
	}
}

// TestE2EScaleThreeHundred is the scale test that runs with the others
// (skipped with -short, as the tree's heavy tests are): 300 hosts, cold
// then warm, 100 at a time, every host answering exactly once in the
// streamed JSON and in the summary. Timings are the benchmark's business
// (bench/sshbench, docs/BENCHMARKS.md).
func TestE2EScaleThreeHundred(t *testing.T) {
	if testing.Short() {
		t.Skip("300 hosts: not in -short")
	}
	const n = 300
	c := testhosts.New(t, n, testhosts.WithMode(testhosts.ModeNetns), func(cfg *testhosts.Config) { cfg.LogLevel = "ERROR" })
	e := newEnv(t, c, true)
	for _, round := range []string{"cold", "warm"} {
		var stdout, stderr bytes.Buffer
		code := run(t.Context(), []string{"-c", e.dir, "--max-procs", "100", "--out", "json", "--summary", "*", "test.ping"},
			strings.NewReader(""), &stdout, &stderr)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", round, code, tail(stderr.String()))
		}
		seen := map[string]bool{}
		dec := json.NewDecoder(&stdout)
		for dec.More() {
			var doc map[string]any
			if err := dec.Decode(&doc); err != nil {
				t.Fatalf("%s: %v", round, err)
			}
			for id, v := range doc {
				if seen[id] || v != true {
					t.Errorf("%s: %s answered %v (seen before: %v)", round, id, v, seen[id])
				}
				seen[id] = true
			}
		}
		if len(seen) != n {
			t.Errorf("%s: %d hosts answered, want %d", round, len(seen), n)
		}
		want := fmt.Sprintf("# of minions targeted: %d\n# of minions returned: %d\n# of minions that did not return: 0\n# of minions with errors: 0\n", n, n)
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("%s: summary lacks %q:\n%s", round, want, tail(stderr.String()))
		}
	}
}

func tail(s string) string {
	if len(s) > 2000 {
		return s[len(s)-2000:]
	}
	return s
}
