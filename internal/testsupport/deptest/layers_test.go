package deptest

import (
	"slices"
	"sort"
	"strings"
	"testing"
)

// layers is the direction data flows in (STYLE.md): cmd → executors
// (sshexec, master, minion) → thin → state (the state.* entry → run →
// states → modules → grains, pillar, fileclient → render → jinja,
// compile → yaml → ordered) → leaves. A package may import packages of
// its own layer or of lower ones, never a higher one. The longest prefix
// names a package's layer; every package of the module must have one.
var layers = []struct {
	prefix string
	layer  int
}{
	// Leaves: no imports of the project.
	{"internal/py", 0}, {"internal/sshpattern", 0}, {"internal/logattr", 0},
	{"internal/jid", 0}, {"internal/version", 0}, {"internal/txtar", 0},
	{"internal/pytime", 0}, {"state/keyword", 0}, {"internal/sdnotify", 0},
	{"internal/relay", 0}, // salt-ssh --relay: chunks, peers, the coordinator

	{"internal/winsession", 0},
	// The value model and Salt's YAML.
	{"internal/ordered", 1}, {"internal/saltyaml", 2},
	// The stored shape of mine data, shared by the master and the masterless minion.
	{"internal/minedata", 2},
	// Wire formats and process plumbing.
	{"internal/protocol", 3}, {"internal/logging", 3}, {"internal/shutdown", 3}, {"internal/httpget", 3},
	// Domain cores: crypto, matchers, templates, the compiler.
	{"internal/crypt", 4}, {"state/target", 4}, {"state/jinja", 4}, {"state/compile", 4},
	// Configuration, keys, job cache, transport, rendering.
	{"state/render", 5}, {"internal/config", 5}, {"internal/pki", 5}, {"internal/jobcache", 5},
	{"internal/eauth", 5}, {"internal/schedule", 5}, {"internal/beacons", 5},
	{"internal/transport", 5}, {"internal/daemon", 5},
	// The database job caches (mysql, pgjsonb) beside the file one.
	{"internal/jobcache/sqlcache", 5},
	// What a state run reads: files, grains, pillar.
	{"state/fileclient", 6}, {"state/coregrains", 6}, {"state/pillar", 6},
	// Execution modules, the shell runner, returners.
	{"state/modules", 7}, {"state/shell", 7}, {"state/returners", 7},
	// State modules, then the runner.
	{"state/states", 8}, {"state/run", 9},
	// The state.* functions (state/apply) drive the engine; the registries that pull
	// them in and the pillar module that calls them sit with them.
	{"state/apply", 10}, {"state/modules/allmodules", 10}, {"state/pillar/module", 10},
	// The reactor core (salt/utils/reactor.py): the map, rendering and
	// the pool, shared by the master's reactor and the minion's engine.
	{"internal/reactor", 10},
	// The remote runtime, outputters, rosters, shared CLI options.
	{"thin", 11}, {"output", 11}, {"roster", 11}, {"internal/targetopt", 11}, {"internal/eauthcli", 11},
	// Executors. client (Salt's LocalClient: sessions, batches, subsets on the
	// master's local socket) and netapi (salt-api) sit beside them: they drive
	// master and sshexec, so they are not in executors below.
	{"sshexec", 12}, {"master", 12}, {"minion", 12}, {"client", 12}, {"netapi", 12},
	// Orchestration (state.orchestrate, the saltmod states) drives master,
	// client and salt-ssh together, so it sits above them all.
	{"orchestrate", 13},

	// syndic drives a minion link upward and the master's local socket
	// downward, so it too sits beside the executors.
	{"syndic", 12},
	// Test support, then commands and benchmarks.
	{"internal/testsupport", 20},
	{"cmd", 30}, {"bench", 30},
	// Build tools (packaging): never linked into a command or the thin binary.
	{"internal/tools", 30},
}

// knownBackEdges are imports that break the direction above and are yet
// to be removed; nothing may be added here.
var knownBackEdges = []string{}

// executors are the layer-12 trees that must not import one another.
var executors = []string{"sshexec", "master", "minion"}

func layerOf(path string) (int, bool) {
	best, layer := -1, 0
	for _, l := range layers {
		if (path == l.prefix || strings.HasPrefix(path, l.prefix+"/")) && len(l.prefix) > best {
			best, layer = len(l.prefix), l.layer
		}
	}
	return layer, best >= 0
}

func tree(path string, roots []string) string {
	for _, r := range roots {
		if path == r || strings.HasPrefix(path, r+"/") {
			return r
		}
	}
	return ""
}

func TestLayers(t *testing.T) {
	var found []string
	for _, p := range list(t, module+"/...") {
		from := strings.TrimPrefix(p.ImportPath, module+"/")
		fl, ok := layerOf(from)
		if !ok {
			t.Errorf("%s has no layer in the table", from)
			continue
		}
		for _, imp := range p.Imports {
			to, ok := strings.CutPrefix(imp, module+"/")
			if !ok {
				continue
			}
			tl, _ := layerOf(to)
			ft, tt := tree(from, executors), tree(to, executors)
			if tl > fl || (ft != "" && tt != "" && ft != tt) {
				found = append(found, from+" -> "+to)
			}
		}
	}
	sort.Strings(found)
	for _, e := range found {
		if !slices.Contains(knownBackEdges, e) {
			t.Errorf("back-edge %s: a package may import only its own layer or lower ones (see layers)", e)
		}
	}
	for _, e := range knownBackEdges {
		if !slices.Contains(found, e) {
			t.Errorf("known back-edge %s is gone: remove it from knownBackEdges", e)
		}
	}
}
