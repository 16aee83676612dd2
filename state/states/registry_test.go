package states

import (
	"context"
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/keyword"
	"github.com/brinesalt/brine/state/modules"
)

func nop(context.Context, *Call) (*Result, error) { return NewResult("x", True, ""), nil }

func TestRegistry(t *testing.T) {
	r := NewRegistry()
	r.Register(Function{Name: "m.f", Spec: modules.Spec{Params: []modules.Param{{Name: "name"}, {Name: "opt", Optional: true, Default: 1}}}, Fn: nop})
	func() {
		defer func() {
			if recover() == nil {
				t.Error("duplicate registration must panic")
			}
		}()
		r.Register(Function{Name: "m.f", Fn: nop})
	}()
	if _, reason := r.Lookup(nil, "m.g"); reason != "'m.g' is not available." {
		t.Errorf("reason = %q", reason)
	}
	r.SetVirtual("m", func(*modules.Env) (bool, string) { return false, "no m here" })
	if _, reason := r.Lookup(nil, "m.f"); reason != "'m' __virtual__ returned False: no m here" {
		t.Errorf("virtual reason = %q", reason)
	}
}

func TestBind(t *testing.T) {
	f := &Function{Name: "m.f", Spec: modules.Spec{Params: []modules.Param{{Name: "name"}, {Name: "opt", Optional: true, Default: 1}}}, Fn: nop}
	low := ordered.FromPairs("state", "m", "fun", "f", "name", "n", "__id__", "n", "order", 5, "require", []any{}, "extra", 2)
	if _, _, err := f.Bind(low, keyword.Internal); err == nil || err.Error() != "'extra' is an invalid keyword argument for 'm.f'" {
		t.Errorf("err = %v", err)
	}
	low.Set("more", 3)
	if _, _, err := f.Bind(low, keyword.Internal); err == nil || err.Error() != "'extra' and 'more' are invalid keyword arguments for 'm.f'" {
		t.Errorf("err = %v", err)
	}
	f.Spec.VarKw = true
	args, kw, err := f.Bind(low, keyword.Internal)
	if err != nil || args["name"] != "n" || args["opt"] != 1 || kw.Len() != 2 || !kw.Has("extra") {
		t.Errorf("bind = %v %v %v", args, kw.Keys(), err)
	}
	if got := Tag(low); got != "m_|-n_|-n_|-f" {
		t.Errorf("Tag = %q", got)
	}
}
