package pkgstate

import (
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/states"
)

// aggregated are the pkg functions mod_aggregate folds together.
var aggregated = map[string]bool{"installed": true, "latest": true, "removed": true, "purged": true}

// modAggregate is salt/states/pkg.py mod_aggregate: the packages of every
// pkg chunk with the same function and fromrepo that has not run and is
// not aggregated yet go into the low chunk's pkgs (or sources, when the
// first such chunk uses sources; the two are never mixed), and those
// chunks are marked __agg__. Chunks with hold are left alone; a chunk's
// version moves into its pkgs entry ({name: version}) and is removed
// from the chunk.
//
// The state system marks the low chunk __agg__ before calling this, so
// the low chunk's own pkgs are not added twice; a low chunk with only a
// name and no pkgs is then run with the others' pkgs alone, since
// pkg.installed ignores name when pkgs is given. That is Salt 3006's
// behaviour and Brine keeps it. The marked chunks still run afterwards
// on their own and find their packages in place.
func modAggregate(low *ordered.Map, chunks []*ordered.Map, ran func(string) bool) *ordered.Map {
	if !aggregated[ordered.KeyString(low.Value("fun"))] {
		return low
	}
	var pkgs []any
	pkgType := ""
	for _, chunk := range chunks {
		if ran(states.Tag(chunk)) || chunk.Value("state") != "pkg" || chunk.Has("__agg__") {
			continue
		}
		if !ordered.Equal(chunk.Value("fun"), low.Value("fun")) || !ordered.Equal(chunk.Value("fromrepo"), low.Value("fromrepo")) {
			continue
		}
		if chunk.Has("sources") {
			if pkgType == "" {
				pkgType = "sources"
			}
			if pkgType == "sources" {
				pkgs = append(pkgs, listOf(chunk.Value("sources"))...)
				chunk.Set("__agg__", true)
			}
			continue
		}
		if chunk.Has("hold") {
			continue
		}
		if pkgType == "" {
			pkgType = "pkgs"
		}
		if pkgType != "pkgs" {
			continue
		}
		switch {
		case chunk.Has("pkgs"):
			pkgs = append(pkgs, listOf(chunk.Value("pkgs"))...)
			chunk.Set("__agg__", true)
		case chunk.Has("name"):
			version, hasVersion := chunk.Get("version")
			chunk.Delete("version")
			if hasVersion && version != nil {
				pkgs = append(pkgs, ordered.FromPairs(chunk.Value("name"), version))
			} else {
				pkgs = append(pkgs, chunk.Value("name"))
			}
			chunk.Set("__agg__", true)
		}
	}
	if pkgType != "" && len(pkgs) > 0 {
		low.Set(pkgType, append(listOf(low.Value(pkgType)), pkgs...))
	}
	return low
}

// listOf is a list value, or nil for anything else.
func listOf(v any) []any {
	l, _ := v.([]any)
	return append([]any(nil), l...)
}
