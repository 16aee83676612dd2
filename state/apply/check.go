package apply

import "github.com/brinesalt/brine/internal/ordered"

// CheckResult is salt/utils/state.py check_result: false for an empty
// mapping or any state (at any depth) whose result is false. The
// orchestration runner and the saltmod states judge returns with it.
func CheckResult(running any, recurse bool) bool {
	m, ok := running.(*ordered.Map)
	if !ok {
		return false
	}
	return checkResult(m, recurse, nil)
}
