package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/brinesalt/brine/client"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/master"
)

// runBatch is salt/cli/batch.py: find the minions that answer
// test.ping, then keep at most batch-size of them running the job,
// starting the next one batch-wait seconds after one returns (the
// sliding window is client.Batch). The exit code is the highest retcode
// returned (salt/cli/salt.py _run_batch). --static runs the same way,
// quietly, over 100% of the minions unless -b says otherwise, and prints
// every return as one document at the end.
func (c *cli) runBatch(ctx context.Context, req master.PublishRequest) int {
	s, err := c.connect(ctx)
	if err != nil {
		fmt.Fprintln(c.stderr, err)
		return 1
	}
	defer s.Close()
	up, expected, err := s.Ping(ctx, req)
	if err != nil {
		fmt.Fprintln(c.stderr, "Error:", err)
		return 1
	}
	if !c.o.static {
		for _, id := range expected {
			if !slices.Contains(up, id) {
				fmt.Fprintf(c.stdout, "Minion %s did not respond. No job will be sent.\n", id)
			}
		}
	}
	var static *ordered.Map
	if c.o.static {
		static = ordered.New()
	} else if len(up) == 0 {
		fmt.Fprintln(c.stderr, "No minions matched the target.")
		return 2
	}
	spec := c.o.batch
	if spec == "" {
		spec = "100%"
	}
	b := c.newBatch(s, req, static)
	if b.N, err = client.BatchSize(spec, len(up)); err != nil {
		fmt.Fprintln(c.stderr, err)
		return 2
	}
	code, err := b.Run(ctx, up)
	if err != nil && !errors.Is(err, client.ErrMasterLost) && ctx.Err() == nil {
		fmt.Fprintln(c.stderr, "Error:", err)
	}
	if static != nil {
		return c.finishStatic(static)
	}
	return code
}

// newBatch wires a batch's hooks to salt's output: each round's
// "Executing run on [...]", each return as it comes and a timed-out
// minion as an empty return, or, for --static, every return into one
// document.
func (c *cli) newBatch(s *client.Session, req master.PublishRequest, static *ordered.Map) *client.Batch {
	b := &client.Batch{S: s, Req: req, Wait: time.Duration(c.o.batchWait * float64(time.Second)), Failhard: c.failhard(),
		OnReturn: c.printReturn,
		OnTimeout: func(id string) {
			c.display(ordered.FromPairs(id, ordered.New()), "", 0)
		},
		OnStart: func(ids []string) {
			fmt.Fprintf(c.stdout, "\nExecuting run on %s\n\n", pyList(ids))
		},
		OnFailhard: func(id string) {
			c.log.Error("Minion returned with non-zero exit code. Batch run stopped due to failhard", "minion", id)
		},
	}
	if static != nil {
		b.OnStart = nil
		b.OnReturn = func(id string, data *ordered.Map) { static.Set(id, data.Value("return")) }
		b.OnTimeout = func(id string) { static.Set(id, ordered.New()) }
	}
	return b
}

// finishStatic is the --static end of salt/cli/salt.py _run_batch: one
// document of every return, then exit 0 whatever the minions returned
// (Salt passes no retcode there), or 2 with "ERROR: No return received"
// when nothing came back (_output_ret).
func (c *cli) finishStatic(all *ordered.Map) int {
	c.display(all, "", 0)
	if all.Len() == 0 {
		fmt.Fprintln(c.stderr, "ERROR: No return received")
		return 2
	}
	return 0
}

// failhard is --failhard or failhard: True in the master config, which
// Batch.run reads from the merged opts.
func (c *cli) failhard() bool {
	on, _ := c.cfg.Value("failhard").(bool)
	return c.o.failhard || on
}

func pyList(ids []string) string {
	q := make([]string, len(ids))
	for i, id := range ids {
		q[i] = "'" + id + "'"
	}
	return "[" + strings.Join(q, ", ") + "]"
}
