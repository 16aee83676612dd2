package master

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
	"github.com/brinesalt/brine/internal/version"
	"github.com/brinesalt/brine/state/target"
)

// versionLabels are manage.versions' labels by comparison result.
var versionLabels = map[int]string{
	-2: "Minion offline",
	-1: "Minion requires update",
	0:  "Up to date",
	1:  "Minion newer than master",
}

// versions is manage.versions (salt/runners/manage.py): test.version on
// every minion, each compared with the master's Salt version. A minion
// whose call failed is "Minion offline" with False, as in Salt; minions
// that did not answer are left out, as client.cmd leaves them out. The
// master's own version is under "Master".
func (m *Master) versions(ctx context.Context) *ordered.Map {
	got, _, err := m.Gather(ctx, PublishRequest{Tgt: "*", TgtType: "glob", Fun: "test.version"}, m.o.Timeout)
	out := ordered.New()
	if err != nil {
		return out
	}
	byDiff := map[int]*ordered.Map{}
	var order []int
	for _, id := range sortedKeys(got) {
		diff, val := -2, any(false)
		rc, _ := protocol.AsInt(got[id].Value("retcode"))
		if s, ok := got[id].Value("return").(string); ok && rc == 0 {
			diff, val = CompareVersions(s, version.Salt), s
		}
		if byDiff[diff] == nil {
			byDiff[diff] = ordered.New()
			order = append(order, diff)
		}
		byDiff[diff].Set(id, val)
	}
	for _, d := range order {
		out.Set(versionLabels[d], byDiff[d])
	}
	out.Set("Master", version.Salt)
	return out
}

// CompareVersions compares two Salt version strings as
// salt.utils.compat.cmp on SaltStackVersion does: -1, 0 or 1. Numeric
// parts compare as numbers, missing parts count as 0, and a release
// candidate ("3006.0rc1") sorts before its release.
func CompareVersions(a, b string) int {
	na, rca := parseVersion(a)
	nb, rcb := parseVersion(b)
	for i := range max(len(na), len(nb)) {
		x, y := at(na, i), at(nb, i)
		if x != y {
			return cmp.Compare(x, y)
		}
	}
	return cmp.Compare(rca, rcb)
}

// parseVersion splits "3006.19" into its numbers and a release-candidate
// rank (the rc number, or a large rank for a final release).
func parseVersion(s string) ([]int, int) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "v")
	rc := 1 << 30
	if i := strings.Index(s, "rc"); i >= 0 {
		rc, _ = strconv.Atoi(leadingDigits(s[i+2:]))
		s = s[:i]
	}
	if i := strings.IndexAny(s, "+-"); i >= 0 {
		s = s[:i]
	}
	var nums []int
	for _, p := range strings.Split(s, ".") {
		n, _ := strconv.Atoi(leadingDigits(p))
		nums = append(nums, n)
	}
	return nums, rc
}

func leadingDigits(s string) string {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i]
}

func at(l []int, i int) int {
	if i < len(l) {
		return l[i]
	}
	return 0
}

// cachedData is cache.grains and cache.pillar (salt/runners/cache.py
// through MasterPillarUtil with use_cached_*=True and no fallback): the
// minions the target reaches (check_minions, greedy), each with its
// grains or pillar from the minion data cache; minions without cached
// data are left out. which is "grains" or "pillar".
func (m *Master) cachedData(tgt any, tgtType, which string) (*ordered.Map, error) {
	kind, err := target.ParseKind(tgtType)
	if err != nil {
		return nil, fmt.Errorf("cache.%s: %w", which, err)
	}
	ids, err := m.CheckMinions(tgt, kind, "")
	if err != nil {
		return nil, fmt.Errorf("cache.%s: %w", which, err)
	}
	out := ordered.New()
	for _, id := range ids {
		d, ok := m.minionData(id)
		if !ok {
			continue
		}
		v := d.Grains
		if which == "pillar" {
			v = d.Pillar
		}
		if v != nil {
			out.Set(id, v)
		}
	}
	return out, nil
}

// cacheRunner binds cache.grains(tgt, tgt_type="glob") and
// cache.pillar(tgt=None, tgt_type="glob"). cache.grains requires a
// target, as Salt 3006 does; cache.pillar without one covers every
// minion.
func (m *Master) cacheRunner(fun string, args []any, kw *ordered.Map) (any, error) {
	which := strings.TrimPrefix(fun, "cache.")
	var tgt any
	if v, ok := kw.Get("tgt"); ok {
		tgt = v
	} else if len(args) > 0 {
		tgt = args[0]
	}
	tgtType := "glob"
	if v, ok := kw.Value("tgt_type").(string); ok && v != "" {
		tgtType = v
	} else if len(args) > 1 {
		tgtType = ordered.KeyString(args[1])
	}
	if tgt == nil || tgt == "" {
		if which == "grains" {
			return nil, fmt.Errorf("cache.grains: a target (tgt) is required")
		}
		tgt = "*"
	}
	return m.cachedData(tgt, tgtType, which)
}
