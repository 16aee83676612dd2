// Package core is the core thin flavor: the execution modules a first
// contact with a host most often needs (test, cmd, grains), linked into
// cmd/salt-thin-core, a binary a third the size of the full thin. A cold
// host pays CPU for every byte of the thin it unpacks and hashes, so
// salt-ssh sends this flavor for a function in Functions when the host
// has no full thin of its build, and the full thin for anything else.
//
// Importing the package registers the core modules in modules.Default;
// salt-ssh imports it (with everything else) to compute Functions from
// the same registrations the core binary makes, so the two cannot drift.
package core

import (
	"slices"

	"github.com/brinesalt/brine/state/modules"
	_ "github.com/brinesalt/brine/state/modules/cmd"    // cmd.*
	_ "github.com/brinesalt/brine/state/modules/grains" // grains.*
	_ "github.com/brinesalt/brine/state/modules/test"   // test.*
)

// Modules are the execution modules the core flavor links.
var Modules = []string{"cmd", "grains", "test"}

// needsFull are core-module functions that run on the full thin: those
// whose answer depends on every module being loaded, as they list the
// loader's modules or call a function named in their arguments
// (salt/modules/test.py module_report, provider, providers, cross_test,
// try), and those that write the grains file, whose YAML codec the core
// does not link (state/coregrains/grainsyaml).
var needsFull = map[string]bool{
	"test.cross_test":    true,
	"test.module_report": true,
	"test.provider":      true,
	"test.providers":     true,
	"test.try":           true,

	"grains.append":  true,
	"grains.delkey":  true,
	"grains.delval":  true,
	"grains.remove":  true,
	"grains.set":     true,
	"grains.setval":  true,
	"grains.setvals": true,
}

// Functions lists the functions salt-ssh may run on the core flavor: the
// functions of Modules registered in r, less those that need every
// module loaded. Sorted.
func Functions(r *modules.Registry) []string {
	var out []string
	for _, m := range Modules {
		for _, f := range r.Functions(m) {
			if !needsFull[f] {
				out = append(out, f)
			}
		}
	}
	return out
}

// Runs reports whether fun, a "mod.fun" name, is in Functions(r).
func Runs(r *modules.Registry, fun string) bool {
	return slices.Contains(Functions(r), fun)
}
