package master

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
	"github.com/brinesalt/brine/internal/transport"
)

// TestMasterOptsAndTops checks the replies a Salt 3006 minion's
// state.apply needs from its master: _master_opts shaped as
// AESFuncs._master_opts (salt/master.py) and _master_tops answering {}
// rather than False. Without them a real salt-minion failed with
// KeyError 'renderer' and "'bool' object is not iterable".
func TestMasterOptsAndTops(t *testing.T) {
	m, ctx := startMaster(t)
	req := &transport.Req{Addr: m.RetAddr().String()}
	defer req.Close()
	ask := asker(t, ctx, req, "m1")

	got, ok := ask(ordered.FromPairs("cmd", protocol.CmdMasterOpts)).(*ordered.Map)
	if !ok {
		t.Fatalf("_master_opts reply is not a map: %v", got)
	}
	wantKeys := []any{"file_roots", "top_file_merging_strategy", "env_order", "default_top",
		"renderer", "failhard", "state_top", "state_top_saltenv", "nodegroups", "state_auto_order",
		"state_events", "state_aggregate", "jinja_env", "jinja_sls_env", "jinja_lstrip_blocks", "jinja_trim_blocks"}
	if diff := cmp.Diff(wantKeys, got.Keys()); diff != "" {
		t.Errorf("_master_opts keys (-want +got):\n%s", diff)
	}
	if got.Value("renderer") != "jinja|yaml" || got.Value("state_top") != "top.sls" || got.Value("state_auto_order") != true {
		t.Errorf("_master_opts values: %v", got)
	}
	roots, _ := got.Value("file_roots").(*ordered.Map)
	if l, ok := roots.Value("base").([]any); !ok || len(l) != 0 {
		t.Errorf("file_roots must name base with no paths, got %v", roots)
	}

	envOnly, _ := ask(ordered.FromPairs("cmd", protocol.CmdMasterOpts, "env_only", true)).(*ordered.Map)
	if diff := cmp.Diff(wantKeys[:4], envOnly.Keys()); diff != "" {
		t.Errorf("env_only keys (-want +got):\n%s", diff)
	}

	tops := ask(ordered.FromPairs("cmd", protocol.CmdMasterTops, "id", "m1", "opts", ordered.New()))
	if mt, ok := tops.(*ordered.Map); !ok || mt.Len() != 0 {
		t.Errorf("_master_tops = %#v, want an empty map", tops)
	}
}
