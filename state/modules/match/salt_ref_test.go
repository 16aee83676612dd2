package match

import (
	"context"
	"io"
	"log/slog"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
)

// testdata/salt_ref.json holds calls of Salt 3006's own
// salt/modules/match.py functions (with its matchers and
// salt.utils.dictupdate, on CPython 3.11) and their returns; a return of
// {"__error__": name} is an exception Salt raised.
func TestAgainstSalt(t *testing.T) {
	f, err := os.Open("testdata/salt_ref.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	v, err := ordered.DecodeJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	doc := v.(*ordered.Map)
	opts := doc.Value("opts").(*ordered.Map)
	for _, c := range doc.Value("calls").([]any) {
		call := c.(*ordered.Map)
		fun, args, kwargs := call.Value("fun").(string), call.Value("args").([]any), call.Value("kwargs").(*ordered.Map)
		want := call.Value("want")
		t.Run(fun, func(t *testing.T) {
			r := modules.NewRegistry()
			Register(r)
			env := (&modules.Env{
				Pillar:   opts.Value("pillar").(*ordered.Map),
				Opts:     opts,
				Registry: r,
				Log:      slog.New(slog.NewTextHandler(io.Discard, nil)),
				Context:  map[string]any{},
			}).WithGrains(opts.Value("grains").(*ordered.Map))
			got, err := env.Run(context.Background(), fun, args, kwargs)
			if m, ok := want.(*ordered.Map); ok && m.Has("__error__") {
				if err == nil {
					t.Errorf("%s%v %v = %v, Salt raises %v", fun, args, kwargs.StringKeys(), got, m.Value("__error__"))
				}
				return
			}
			if err != nil {
				t.Fatalf("%s%v: %v", fun, args, err)
			}
			if diff := cmp.Diff(want, got, cmpMap); diff != "" {
				t.Errorf("%s%v %v (-salt +brine):\n%s", fun, args, kwargs.StringKeys(), diff)
			}
		})
	}
}
