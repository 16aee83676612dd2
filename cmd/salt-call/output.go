package main

import (
	"io"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/output"
	"github.com/brinesalt/brine/state/modules"
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
		s := output.Highstate(data, oo, output.ParseHighstateOptions(opts, o.stateOutput, o.stateVerbose))
		_, err := io.WriteString(w, strings.TrimRight(s, " \t\n")+"\n")
		return err
	}
	return output.Write(w, out, data, oo)
}

// highstateFuncs are the state functions whose __outputter__ is highstate
// (salt/modules/state.py).
var highstateFuncs = map[string]bool{}

func init() {
	for _, f := range strings.Fields("apply sls highstate single sls_id top template template_str high low request run_request test") {
		highstateFuncs["state."+f] = true
	}
}
