package target

import "github.com/brinesalt/brine/internal/ordered"

// testGrains is a fixed grain set; the expectations in the tests below
// were worked out from salt/utils/data.py (subdict_match,
// traverse_dict_and_list) and salt/matchers/*.py in Salt 3006.
func testGrains() *ordered.Map {
	return ordered.FromPairs(
		"id", "web1",
		"os", "Debian",
		"osmajorrelease", 12,
		"is_vm", false,
		"roles", []any{"web", "Cache"},
		"ipv4", []any{"10.0.0.5", "127.0.0.1"},
		"ipv6", []any{"::1", "fe80::1", "2001:db8::5"},
		"ip_interfaces", ordered.FromPairs("eth0", []any{"10.0.0.5", "fe80::1"}),
		"env", ordered.FromPairs("name", "prod", "tier", 1, "tags", []any{"a", "b"}),
		"mixed", []any{"plain", ordered.FromPairs("k", "v"), 3},
		"ints", ordered.FromPairs(1, "one", "2", "two"),
		"path", "a:b",
		"empty", ordered.New(),
		"nothing", nil,
		"float", 1.5,
	)
}

func testPillar() *ordered.Map {
	return ordered.FromPairs(
		"role", "web",
		"app", ordered.FromPairs("version", "1.2.3", "ports", []any{80, 443}),
	)
}

func testMinion(id string) *Minion {
	return &Minion{ID: id, Grains: testGrains(), Pillar: testPillar()}
}
