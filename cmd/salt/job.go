package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"time"

	"github.com/brinesalt/brine/client"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/master"
	"github.com/brinesalt/brine/output"
)

type cli struct {
	o   options
	mo  master.Options
	cfg *ordered.Map // the master config as read, for output options
	log *slog.Logger
	fun string
	// stdout takes messages, outW the outputters' documents: they differ
	// with --out-file, as in Salt, where only display_output goes to the
	// file.
	stdout, outW io.Writer
	stderr       io.Writer
	sock         string
}

// connect opens the session the job is published and collected on.
func (c *cli) connect(ctx context.Context) (*client.Session, error) {
	return client.Connect(ctx, c.sock, c.mo.Timeout, c.mo.GatherJobTimeout)
}

func (c *cli) runOnce(ctx context.Context, req master.PublishRequest) int {
	req.To = int(c.mo.Timeout / time.Second) // for the syndics of a master of masters
	if c.o.async {
		cl, err := master.Dial(ctx, c.sock)
		if err != nil {
			fmt.Fprintln(c.stderr, err)
			return 1
		}
		defer cl.Close()
		jid, _, err := cl.Publish(ctx, req)
		if err != nil {
			fmt.Fprintln(c.stderr, "Error:", err)
			return 1
		}
		fmt.Fprintf(c.stdout, "Executed command with job ID: %s\n", jid)
		return 0
	}
	s, err := c.connect(ctx)
	if err != nil {
		fmt.Fprintln(c.stderr, err)
		return 1
	}
	defer s.Close()
	if c.o.subset > 0 {
		if req, err = s.Subset(ctx, req, c.o.subset); err != nil {
			fmt.Fprintln(c.stderr, "Error:", err)
			return 1
		}
	}
	jid, minions, err := s.Pub.Publish(ctx, req)
	var ae *master.AuthError
	if errors.As(err, &ae) {
		// salt/cli/salt.py prints the refusal through the outputter and
		// ends normally (exit 0), as Salt does.
		if err := output.Write(c.outW, "nested", ae.Message, output.Options{}); err != nil {
			fmt.Fprintln(c.stderr, err)
		}
		return 0
	}
	if err != nil {
		fmt.Fprintln(c.stderr, "Error:", err)
		return 1
	}
	orderMasters := s.OrderMasters(ctx)
	if len(minions) == 0 && !orderMasters {
		fmt.Fprintln(c.stderr, "No minions matched the target. No command was sent, no jid was assigned.")
		fmt.Fprintln(c.stderr, "ERROR: No return received")
		return 2
	}
	if c.o.verbose {
		fmt.Fprintf(c.stdout, "Executing job with jid %s\n-------------------------------------------\n\n", jid)
	} else if c.o.showJID {
		fmt.Fprintf(c.stdout, "jid: %s\n", jid)
	}
	if c.o.progress {
		return c.withProgress(ctx, s, jid, minions, req)
	}
	got, minions, err := s.Collect(ctx, jid, minions, req, c.printReturn)
	if err != nil {
		return c.masterLost(ctx, jid, err)
	}
	if orderMasters && len(minions) == 0 {
		// A master of masters does not stop at "No minions matched":
		// when no tier had a match, salt prints an empty result, exit 0
		// (salt/client/__init__.py _check_pub_data, salt/cli/salt.py).
		fmt.Fprintln(c.stdout)
		return 0
	}
	return c.finish(jid, minions, got)
}

// masterListening reports whether the master's local socket still takes
// connections, as LocalClient.pub checks for publish_pull.ipc before it
// sends a request.
func (c *cli) masterListening(ctx context.Context) bool {
	if _, err := os.Stat(c.sock); err != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cl, err := master.Dial(ctx, c.sock)
	if err != nil {
		return false
	}
	cl.Close()
	return true
}

// masterLost reports a master that went away mid-job as Salt's CLI
// does: LocalClient's next request to it (the find_job round of
// get_iter_returns) raises SaltClientError, "The salt master could not
// be contacted. Is master running?" when its socket is gone, else
// "Salt request timed out. The master is not responding. ..."
// (salt/client/__init__.py pub and run_job), and salt/cli/salt.py
// prints that through display_output instead of the minions that did
// not return. Salt then ends run() without sys.exit, so the status is
// 0, and Brine matches it. Brine adds on stderr that the returns are
// not lost: the minions keep them queued and the master stores them
// in its job cache when it is back.
func (c *cli) masterLost(ctx context.Context, jid string, err error) int {
	msg := "Salt request timed out. The master is not responding. You may need to run your command with `--async` in order to bypass the congested event bus. With `--async`, the CLI tool will print the job id (jid) and exit immediately without listening for responses. You can then use `salt-run jobs.lookup_jid` to look up the results of the job in the job cache later."
	if !c.masterListening(ctx) {
		msg = "The salt master could not be contacted. Is master running?"
	}
	c.display(msg, "", 1)
	fmt.Fprintf(c.stderr, "ERROR: %v while waiting for job %s. The minions' returns are not lost: they are kept in the master's job cache once it is running again; look them up with: salt-run jobs.lookup_jid %s\n", err, jid, jid)
	return 0
}

// finish displays the minions that did not return, as Salt 3006 does
// with the no_return outputter ("Minion did not return. [No response]"),
// prints the --summary and returns the exit code (salt/cli/salt.py run):
// 1 with "ERROR: Minions returned with non-zero exit code" when a minion
// failed or did not return, else 0. With --hide-timeout (and no -v)
// LocalClient does not expect the silent minions, so they are neither
// shown nor counted.
func (c *cli) finish(jid string, minions []string, got map[string]int) int {
	var missing []string
	if !c.o.hideTimeout || c.o.verbose {
		for _, id := range minions {
			if _, ok := got[id]; !ok {
				missing = append(missing, id)
			}
		}
	}
	slices.Sort(missing)
	for _, id := range missing {
		c.display(ordered.FromPairs(id, "Minion did not return. [No response]\nThe minions may not have all finished running and any remaining minions will return upon completion. To look up the return data for this job later, run the following command:\n\nsalt-run jobs.lookup_jid "+jid), "no_return", 1)
	}
	if c.summaryWanted() {
		c.returnsSummary(got, missing)
	}
	if len(missing) > 0 || countErr(got) > 0 {
		fmt.Fprintln(c.stderr, "ERROR: Minions returned with non-zero exit code")
		return 1
	}
	return 0
}

// summaryWanted is salt/cli/salt.py: the returns summary follows with
// --summary (or cli_summary: True in the master config), and only when
// --out was not given on the command line.
func (c *cli) summaryWanted() bool {
	on, _ := c.cfg.Value("cli_summary").(bool)
	return (c.o.summary || on) && c.o.out == ""
}

func countErr(got map[string]int) int {
	n := 0
	for _, rc := range got {
		if rc != 0 {
			n++
		}
	}
	return n
}
