// Package beacons is the read side of Salt's beacons execution module
// (salt/modules/beacons.py) for a minion without beacons: Brine's
// minions load no beacon modules, so list and list_available answer
// what Salt answers when there are none. Web front-ends call
// beacons.list_available on login.
//
// Not here: add, modify, delete, enable, disable, save and reset, which
// need beacons to manage.
package beacons

import (
	"context"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
)

func init() {
	spec := modules.Spec{Params: []modules.Param{{Name: "return_yaml", Default: true, Optional: true}}, VarKw: true}
	modules.Register(modules.Function{Name: "beacons.list_available",
		Doc:  "List the beacon modules the minion can load (none in Brine): {'beacons': {}}.",
		Spec: spec, Fn: none})
	modules.Register(modules.Function{Name: "beacons.list",
		Doc:  "List the beacons configured on the minion (none in Brine): {'beacons': {}}.",
		Spec: spec, Fn: none})
}

// none is Salt's answer without beacons: {"beacons": {}}, whatever
// return_yaml says.
func none(context.Context, *modules.Call) (any, error) {
	return ordered.FromPairs("beacons", ordered.New()), nil
}
