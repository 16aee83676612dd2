package filestate

import (
	"fmt"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/modules/file"
	"github.com/brinesalt/brine/state/states"
)

func init() { Register(states.Default) }

func opt(name string, def any) modules.Param {
	return modules.Param{Name: name, Optional: true, Default: def}
}

func modulesParam(name string) modules.Param { return modules.Param{Name: name} }

func spec(kw bool, params ...modules.Param) modules.Spec {
	return modules.Spec{Params: append([]modules.Param{{Name: "name"}}, params...), VarKw: kw}
}

// Register adds the file state functions to r.
func Register(r *states.Registry) {
	reg := func(name string, s modules.Spec, fn states.Func) {
		r.Register(states.Function{Name: "file." + name, Spec: s, Fn: fn})
	}
	reg("managed", managedSpec, managed)
	reg("directory", directorySpec, directory)
	reg("absent", spec(true), absent)
	reg("exists", spec(true), exists)
	reg("missing", spec(true), missing)
	reg("touch", spec(false, opt("atime", nil), opt("mtime", nil), opt("makedirs", false)), touch)
	reg("symlink", symlinkSpec, symlink)
	reg("copy", copySpec, copyState)
	reg("rename", renameSpec, renameState)
	reg("hardlink", hardlinkSpec, hardlink)
	reg("pruned", prunedSpec, pruned)
	reg("decode", decodeSpec, decode)
	reg("tidied", tidiedSpec, tidied)
	reg("append", textSpec, appendState)
	reg("prepend", prependSpec, prependState)
	reg("replace", replaceSpec, replace)
	reg("line", lineSpec, line)
	reg("blockreplace", blockSpec, blockreplace)
	reg("comment", commentSpec, commentState)
	reg("keyvalue", keyvalueSpec, keyvalue)
	reg("serialize", serializeSpec, serialize)
	reg("accumulated", accumulatedSpec, accumulated)
	reg("uncomment", uncommentSpec, uncommentState)
	reg("recurse", recurseSpec, recurse)
	reg("mod_run_check_cmd", modules.Spec{Params: []modules.Param{{Name: "cmd"}, {Name: "filename"}}, VarKw: true}, modRunCheckCmd)
}

// result converts the module helpers' Ret into a state Result.
func result(r *file.Ret) *states.Result {
	res := states.NewResult(r.Name, states.True, r.Comment)
	switch r.Result {
	case false:
		res.Result = states.False
	case nil:
		res.Result = states.None
	}
	res.Changes = r.Changes
	res.Warnings = r.Warnings
	return res
}

// fail is Salt's _error: result false with comment msg.
func fail(name string, msg string) *states.Result {
	return states.NewResult(name, states.False, msg)
}

func logWarn(c *states.Call, format string, a ...any) {
	if c.Env.Log != nil {
		c.Env.Log.Warn(fmt.Sprintf(format, a...))
	}
}

// strArg returns an optional string argument, ok false for None.
func strArg(c *states.Call, name string) (string, bool) {
	v := c.Arg(name)
	if v == nil {
		return "", false
	}
	return c.Str(name), true
}

// mapArg returns a dict argument; ok is false when it is set but is not
// a dict.
func mapArg(c *states.Call, name string) (*ordered.Map, bool) {
	switch v := c.Arg(name).(type) {
	case nil:
		return nil, true
	case *ordered.Map:
		return v, true
	}
	return nil, false
}
