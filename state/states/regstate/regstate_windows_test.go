package regstate

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/modules/reg"
	"github.com/brinesalt/brine/state/states"
)

func call(fn states.Func, test bool, args map[string]any) (*states.Result, error) {
	env := &modules.Env{Pillar: ordered.New(), Opts: ordered.New(), Registry: modules.Default, Test: test,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Context: map[string]any{}}
	full := map[string]any{"vname": nil, "vdata": nil, "vtype": "REG_SZ", "use_32bit_registry": false,
		"win_owner": nil, "win_perms": nil, "win_deny_perms": nil, "win_inheritance": true, "win_perms_reset": false}
	for k, v := range args {
		full[k] = v
	}
	return fn(context.Background(), &states.Call{Env: env, Args: full, Kwargs: ordered.New()})
}

// TestWindowsRegStates runs reg.present, reg.absent and reg.key_absent
// against HKCU, in test mode and for real, and again once in place.
func TestWindowsRegStates(t *testing.T) {
	key := fmt.Sprintf(`Software\BrineStateTest%d`, os.Getpid())
	name := `HKCU\` + key
	t.Cleanup(func() { reg.DeleteKeyRecursive("HKCU", key, 0) })
	steps := []struct {
		fn      states.Func
		test    bool
		args    map[string]any
		result  states.Tri
		comment string
		changed bool
	}{
		{present, true, map[string]any{"name": name, "vname": "v", "vdata": "1"}, states.None, `Will add v to ` + name, true},
		{present, false, map[string]any{"name": name, "vname": "v", "vdata": "1"}, states.True, `Added v to ` + name, true},
		{present, false, map[string]any{"name": name, "vname": "v", "vdata": "1"}, states.True, `v in ` + name + ` is already present`, false},
		{present, false, map[string]any{"name": name, "vname": "v", "vdata": "1", "win_owner": "x"}, states.False,
			"win_owner is not supported by this minion yet (salt.utils.win_dacl)", false},
		{absent, false, map[string]any{"name": name, "vname": "v"}, states.True, `Removed ` + key + ` from HKCU`, true},
		{absent, false, map[string]any{"name": name, "vname": "v"}, states.True, name + ` is already absent`, false},
		{keyAbsent, false, map[string]any{"name": name}, states.True, `Removed ` + name, true},
		{keyAbsent, false, map[string]any{"name": name}, states.True, name + ` is already absent`, false},
	}
	for i, s := range steps {
		r, err := call(s.fn, s.test, s.args)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if r.Result != s.result || r.Comment != s.comment || (r.Changes.Len() > 0) != s.changed {
			t.Errorf("step %d: result %v comment %q changes %d; want %v %q changed=%v", i, r.Result, r.Comment, r.Changes.Len(), s.result, s.comment, s.changed)
		}
	}
}
