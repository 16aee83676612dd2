package cmd

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/brinesalt/brine/state/modules"
)

// sig parses a Python signature such as `cmd, cwd=None, shell=DEFAULT_SHELL,
// **kwargs` into a Spec, so that each function's parameters are written
// exactly as in salt/modules/cmdmod.py.
func sig(s string) modules.Spec {
	var spec modules.Spec
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		switch {
		case part == "":
		case part == "**kwargs":
			spec.VarKw = true
		case part == "*args":
			spec.VarArgs = true
		default:
			name, def, ok := strings.Cut(part, "=")
			if !ok {
				spec.Params = append(spec.Params, modules.Param{Name: name})
				continue
			}
			spec.Params = append(spec.Params, modules.Param{Name: name, Default: pyLiteral(def), Optional: true})
		}
	}
	return spec
}

func pyLiteral(s string) any {
	switch s {
	case "None":
		return nil
	case "True":
		return true
	case "False":
		return false
	case "DEFAULT_SHELL":
		return DefaultShell
	}
	if n, err := strconv.Atoi(s); err == nil {
		return n
	}
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') {
		return s[1 : len(s)-1]
	}
	panic(fmt.Sprintf("cmd: bad default %q", s))
}
