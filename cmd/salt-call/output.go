package main

import (
	"io"
	"strings"

	"github.com/brinesalt/brine/output"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/ordered"
)

// display prints {"local": ret} with the chosen outputter; without --out,
// state functions that run states use the highstate outputter (their
// __outputter__) and everything else nested.
func display(w io.Writer, fun string, ret any, rc int, o options, opts *ordered.Map, env *modules.Env) error {
	data := ordered.FromPairs("local", ret)
	out := o.out
	if out == "" {
		if s, ok := opts.Value("output").(string); ok {
			out = s
		}
	}
	if out == "" && highstateFuncs[fun] {
		out = "highstate"
	}
	oo := output.Options{Color: o.forceColor, Retcode: rc, Logger: env.Log}
	if o.outIndentSet {
		oo.Indent = output.IndentOf(o.outIndent)
	}
	if out == "highstate" {
		s := output.Highstate(data, oo, highstateOptions(opts))
		_, err := io.WriteString(w, strings.TrimRight(s, " \t\n")+"\n")
		return err
	}
	return output.Write(w, out, data, oo)
}

// highstateOptions reads state_verbose, state_output and
// state_output_profile from the minion options.
func highstateOptions(opts *ordered.Map) output.HighstateOptions {
	var ho output.HighstateOptions
	if v, ok := opts.Get("state_verbose"); ok && !modules.Truthy(v) {
		ho.Quiet = true
	}
	if v, ok := opts.Value("state_output").(string); ok && strings.HasPrefix(strings.ToLower(v), "terse") {
		ho.Terse = true
	}
	if v, ok := opts.Get("state_output_profile"); ok && !modules.Truthy(v) {
		ho.NoProfile = true
	}
	return ho
}

// highstateFuncs are the state functions whose __outputter__ is highstate
// (salt/modules/state.py).
var highstateFuncs = map[string]bool{}

func init() {
	for _, f := range strings.Fields("apply sls highstate single sls_id top template template_str high low request run_request test") {
		highstateFuncs["state."+f] = true
	}
}
