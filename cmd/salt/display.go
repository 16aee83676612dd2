package main

import (
	"fmt"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
	"github.com/brinesalt/brine/output"
)

// outputter is salt/output/__init__.py get_printout for the salt CLI:
// the configured output (--out, else the master config's output) wins
// over the return's own unless it is "highstate"; with --static and
// nothing chosen, state functions print with highstate. "" is nested.
func (c *cli) outputter(out string) string {
	configured := c.o.out
	if configured == "" {
		configured, _ = c.cfg.Value("output").(string)
	}
	if configured != "" && configured != "highstate" {
		out = configured
	}
	if out == "" && c.o.static {
		if configured != "" {
			out = configured
		} else if strings.HasPrefix(c.fun, "state.") {
			out = "highstate"
		}
	}
	return out
}

func (c *cli) outOpts(retcode int) output.Options {
	// Salt decides colour on its stdout even with --out-file.
	color := output.UseColor(c.stdout, c.o.noColor, c.o.forceColor, c.cfg.Value("color"))
	o := output.Options{Color: color, Retcode: retcode, Logger: c.log,
		Highstate: output.ParseHighstateOptions(c.cfg, c.o.stateOut, c.o.stateVerbose)}
	// state_output_diff (--output-diff) skips the same states as
	// state_verbose: False (salt/output/highstate.py).
	if diff, _ := c.cfg.Value("state_output_diff").(bool); diff || c.o.outputDiff {
		o.Highstate.Quiet = true
	}
	if c.o.outIndent != -1000 {
		o.Indent = output.IndentOf(c.o.outIndent)
	}
	return o
}

// display is salt/output/__init__.py display_output: format data with
// the outputter chosen for out and write it to --out-file (appending)
// or stdout.
func (c *cli) display(data any, out string, retcode int) {
	if err := output.Write(c.outW, c.outputter(out), data, c.outOpts(retcode)); err != nil {
		fmt.Fprintln(c.stderr, err)
	}
}

// printReturn displays one minion's return as it arrives.
func (c *cli) printReturn(id string, data *ordered.Map) {
	out, _ := data.Value("out").(string)
	rc, _ := protocol.AsInt(data.Value("retcode"))
	c.display(ordered.FromPairs(id, data.Value("return")), out, rc)
}
