package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
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

// session is one connection for publishing and one for events.
type session struct {
	pub    *master.Client
	events <-chan master.Event
	close  func()
}

func (c *cli) connect(ctx context.Context) (*session, error) {
	ectx, cancel := context.WithCancel(ctx)
	ev, err := master.Dial(ectx, c.sock)
	if err != nil {
		cancel()
		return nil, err
	}
	ch, err := ev.Events(ectx)
	if err != nil {
		ev.Close()
		cancel()
		return nil, err
	}
	pub, err := master.Dial(ctx, c.sock)
	if err != nil {
		ev.Close()
		cancel()
		return nil, err
	}
	return &session{pub: pub, events: ch, close: func() { cancel(); ev.Close(); pub.Close() }}, nil
}

func (c *cli) runOnce(ctx context.Context, req master.PublishRequest) int {
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
	defer s.close()
	if c.o.subset > 0 {
		if req, err = c.subset(ctx, s, req); err != nil {
			fmt.Fprintln(c.stderr, "Error:", err)
			return 1
		}
	}
	jid, minions, err := s.pub.Publish(ctx, req)
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
	if len(minions) == 0 {
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
	got, err := c.collect(ctx, s, jid, minions, req, c.printReturn)
	if err != nil {
		return c.masterLost(ctx, jid, err)
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

// errMasterLost is the master going away while the CLI waits for a
// job's returns.
var errMasterLost = errors.New("the connection to the master was lost")

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

// collect is LocalClient.get_iter_returns: print returns as they come;
// when timeout passes, ask the silent minions with saltutil.find_job
// (for gather_job_timeout) whether they still run the job, and keep
// waiting another timeout while any does. onReturn sees each return
// once. The master closing the event stream, or refusing the find_job
// publish, ends it with errMasterLost.
func (c *cli) collect(ctx context.Context, s *session, jid string, minions []string, req master.PublishRequest,
	onReturn func(id string, data *ordered.Map)) (map[string]int, error) {
	got := map[string]int{}
	retPrefix := "salt/job/" + jid + "/ret/"
	findPrefix := ""
	running := false
	deadline := time.Now().Add(c.mo.Timeout)
	for len(got) < len(minions) {
		t := time.NewTimer(max(time.Until(deadline), 0))
		select {
		case <-ctx.Done():
			t.Stop()
			return got, nil
		case ev, ok := <-s.events:
			t.Stop()
			if !ok {
				if ctx.Err() != nil {
					return got, nil
				}
				return got, errMasterLost
			}
			if id, ok := strings.CutPrefix(ev.Tag, retPrefix); ok {
				if _, dup := got[id]; !dup {
					rc, _ := protocol.AsInt(ev.Data.Value("retcode"))
					got[id] = rc
					onReturn(id, ev.Data)
					if !slices.Contains(minions, id) {
						minions = append(minions, id)
					}
				}
			} else if findPrefix != "" && strings.HasPrefix(ev.Tag, findPrefix) {
				if r, ok := ev.Data.Value("return").(*ordered.Map); ok && r.Len() > 0 {
					running = true
				}
			}
		case <-t.C:
			if findPrefix != "" {
				// End of a find_job round.
				if !running {
					return got, nil
				}
				findPrefix, running = "", false
				deadline = time.Now().Add(c.mo.Timeout)
				continue
			}
			var silent []any
			for _, id := range minions {
				if _, ok := got[id]; !ok {
					silent = append(silent, id)
				}
			}
			fj, _, err := s.pub.Publish(ctx, master.PublishRequest{Tgt: silent, TgtType: "list", Fun: "saltutil.find_job", Arg: []any{jid}, User: req.User, Auth: req.Auth})
			if err != nil {
				if ctx.Err() != nil {
					return got, nil
				}
				return got, fmt.Errorf("%w: %w", errMasterLost, err)
			}
			findPrefix = "salt/job/" + fj + "/ret/"
			deadline = time.Now().Add(c.mo.GatherJobTimeout)
		}
	}
	return got, nil
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
