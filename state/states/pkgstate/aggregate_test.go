package pkgstate

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/testsupport/pkgtest"
	"github.com/brinesalt/brine/state/run"
	"github.com/brinesalt/brine/state/states"
	"github.com/brinesalt/brine/state/states/teststate"
)

func chunk(kv ...any) *ordered.Map { return ordered.FromPairs(kv...) }

// TestModAggregateSaltCase is Salt's own unit test of pkg.mod_aggregate
// (tests/pytests/unit/states/test_pkg.py test_mod_aggregate): the low
// chunk is a copy of a chunk in the list, so its pkgs appear twice;
// held packages, other functions, other modules and states that already
// ran are left out, and version-less names are added as names.
func TestModAggregateSaltCase(t *testing.T) {
	low := chunk("state", "pkg", "name", "other_pkgs", "pkgs", []any{"byobu"}, "aggregate", true, "fun", "installed")
	chunks := []*ordered.Map{
		chunk("state", "file", "name", "/tmp/install-vim", "__id__", "/tmp/install-vim", "fun", "managed"),
		chunk("state", "file", "name", "/tmp/install-tmux", "__id__", "/tmp/install-tmux", "fun", "managed"),
		chunk("state", "pkg", "name", "other_pkgs", "__id__", "other_pkgs", "pkgs", []any{"byobu"}, "aggregate", true, "fun", "installed"),
		chunk("state", "pkg", "name", "bc", "__id__", "bc", "hold", true, "fun", "installed"),
		chunk("state", "pkg", "name", "vim", "__id__", "vim", "require", []any{"/tmp/install-vim"}, "fun", "installed"),
		chunk("state", "pkg", "name", "tmux", "__id__", "tmux", "require", []any{"/tmp/install-tmux"}, "fun", "installed"),
		chunk("state", "pkgrepo", "name", "deb https://example/apt main", "__id__", "repo", "fun", "managed"),
		chunk("state", "pkg", "name", "google-cloud-sdk", "__id__", "google-cloud-sdk", "require", []any{"repo"}, "fun", "installed"),
	}
	ran := map[string]bool{states.Tag(chunks[0]): true, states.Tag(chunks[1]): true}
	got := modAggregate(low, chunks, func(tag string) bool { return ran[tag] })
	want := []any{"byobu", "byobu", "vim", "tmux", "google-cloud-sdk"}
	if d := cmp.Diff(want, got.Value("pkgs")); d != "" {
		t.Fatalf("pkgs (-want +got):\n%s", d)
	}
	for i, marked := range []bool{false, false, true, false, true, true, false, true} {
		if chunks[i].Has("__agg__") != marked {
			t.Errorf("chunk %d (%v) __agg__ = %v, want %v", i, chunks[i].Value("name"), chunks[i].Has("__agg__"), marked)
		}
	}
}

// TestModAggregateKinds covers versions, sources, fromrepo and the
// functions that do not aggregate.
func TestModAggregateKinds(t *testing.T) {
	never := func(string) bool { return false }
	t.Run("version moves into pkgs", func(t *testing.T) {
		low := chunk("state", "pkg", "name", "a", "__id__", "a", "fun", "installed", "__agg__", true)
		other := chunk("state", "pkg", "name", "b", "__id__", "b", "fun", "installed", "version", "1.2")
		got := modAggregate(low, []*ordered.Map{low, other}, never)
		if want := []any{ordered.FromPairs("b", "1.2")}; !ordered.Equal(want, got.Value("pkgs")) {
			t.Errorf("pkgs = %v, want %v", got.Value("pkgs"), want)
		}
		if other.Has("version") {
			t.Error("version left on the aggregated chunk")
		}
	})
	t.Run("sources are not mixed with pkgs", func(t *testing.T) {
		low := chunk("state", "pkg", "name", "a", "__id__", "a", "fun", "installed", "__agg__", true)
		src := chunk("state", "pkg", "name", "s", "__id__", "s", "fun", "installed", "sources", []any{ordered.FromPairs("s", "/tmp/s.deb")})
		named := chunk("state", "pkg", "name", "n", "__id__", "n", "fun", "installed")
		got := modAggregate(low, []*ordered.Map{low, src, named}, never)
		if got.Has("pkgs") || len(got.Value("sources").([]any)) != 1 || named.Has("__agg__") {
			t.Errorf("low = %v, named marked %v", got, named.Has("__agg__"))
		}
	})
	t.Run("other fromrepo and other functions stay apart", func(t *testing.T) {
		low := chunk("state", "pkg", "name", "a", "__id__", "a", "fun", "installed", "__agg__", true)
		repo := chunk("state", "pkg", "name", "r", "__id__", "r", "fun", "installed", "fromrepo", "backports")
		latest := chunk("state", "pkg", "name", "l", "__id__", "l", "fun", "latest")
		got := modAggregate(low, []*ordered.Map{low, repo, latest}, never)
		if got.Has("pkgs") {
			t.Errorf("low = %v", got)
		}
	})
	t.Run("uptodate does not aggregate", func(t *testing.T) {
		low := chunk("state", "pkg", "name", "a", "__id__", "a", "fun", "uptodate")
		other := chunk("state", "pkg", "name", "b", "__id__", "b", "fun", "uptodate")
		if got := modAggregate(low, []*ordered.Map{low, other}, never); got.Has("pkgs") || other.Has("__agg__") {
			t.Errorf("low = %v", got)
		}
	})
}

// TestAggregateInARun runs pkg chunks through the state runner with
// `aggregate: True` on the first: it installs the other chunk's package
// (with its version) in one apt-get call, after that chunk's requisite,
// and, as Salt 3006 does, without its own name, since pkgs wins over
// name. The aggregated chunk still runs on its own afterwards.
func TestAggregateInARun(t *testing.T) {
	f := &pkgtest.Fake{}
	f.Once("dpkg-query *", 0, dpkgBase).On("dpkg-query *", 0, dpkgBase+"install ok installed curl 7.88.1-10 amd64\n")
	e := env(f, false)
	r := states.NewRegistry()
	Register(r)
	teststate.Register(r)
	chunks := []*ordered.Map{
		chunk("state", "pkg", "fun", "installed", "name", "nginx", "__id__", "nginx", "__sls__", "s", "aggregate", true, "order", 1),
		chunk("state", "test", "fun", "nop", "name", "first", "__id__", "first", "__sls__", "s", "order", 2),
		chunk("state", "pkg", "fun", "installed", "name", "curl", "__id__", "curl", "__sls__", "s", "version", "7.88.1-10",
			"require", []any{ordered.FromPairs("test", "first")}, "order", 3),
	}
	res, err := (&run.Runner{States: r, Env: e}).CallChunks(context.Background(), chunks)
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	res.Map().Range(func(k, v any) bool {
		m := v.(*ordered.Map)
		order = append(order, fmt.Sprintf("%v %v", m.Value("__id__"), m.Value("comment")))
		return true
	})
	want := []string{
		"first Success!",
		"nginx The following packages were installed/updated: curl=7.88.1-10",
		"curl All specified packages are already installed",
	}
	if d := cmp.Diff(want, order); d != "" {
		t.Errorf("run (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"apt-get -q update", installCmd + "curl=7.88.1-10"}, f.Changing("dpkg-query", "apt-cache", "dpkg --get-selections")); d != "" {
		t.Errorf("commands (-want +got):\n%s", d)
	}
}
