package master

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
	"github.com/brinesalt/brine/internal/transport"
)

// TestMine runs the mine requests a Salt minion's mine module sends
// (salt/modules/mine.py) against the master, with the answers of
// salt/daemons/masterapi.py: one function gives {minion: value}, several
// give {function: {minion: value}}, and an allow_tgt entry is only
// served to the minions it targets.
func TestMine(t *testing.T) {
	m, ctx := startMaster(t)
	ask := map[string]func(*ordered.Map) any{}
	for _, id := range []string{"m1", "m2"} {
		req := &transport.Req{Addr: m.RetAddr().String()}
		defer req.Close()
		ask[id] = asker(t, ctx, req, id)
	}
	acl := ordered.FromPairs("__data__", "10.0.0.1", "__saltmine_acl__", 1, "allow_tgt", "m1", "allow_tgt_type", "glob")
	data := ordered.FromPairs("test.ping", true, "network.ip_addrs", acl)
	if r := ask["m1"](ordered.FromPairs("cmd", protocol.CmdMine, "id", "m1", "data", data)); r != true {
		t.Fatalf("_mine = %v", r)
	}
	get := func(who string, fun any) any {
		return ask[who](ordered.FromPairs("cmd", protocol.CmdMineGet, "id", who, "tgt", "*", "fun", fun, "tgt_type", "glob"))
	}
	for _, tc := range []struct {
		who  string
		fun  any
		want *ordered.Map
	}{
		{"m2", "test.ping", ordered.FromPairs("m1", true)},
		{"m2", "network.ip_addrs", ordered.New()},
		{"m1", "network.ip_addrs", ordered.FromPairs("m1", "10.0.0.1")},
		{"m1", "test.ping,network.ip_addrs", ordered.FromPairs(
			"test.ping", ordered.FromPairs("m1", true), "network.ip_addrs", ordered.FromPairs("m1", "10.0.0.1"))},
		{"m2", []any{"test.ping"}, ordered.FromPairs("test.ping", ordered.FromPairs("m1", true))},
	} {
		got, _ := get(tc.who, tc.fun).(*ordered.Map)
		if diff := cmp.Diff(tc.want, got, sameMap); diff != "" {
			t.Errorf("%s mine.get %v (-want +got):\n%s", tc.who, tc.fun, diff)
		}
	}
	ask["m1"](ordered.FromPairs("cmd", protocol.CmdMine, "id", "m1", "data", ordered.FromPairs("disk.usage", 5)))
	ask["m1"](ordered.FromPairs("cmd", protocol.CmdMineDelete, "id", "m1", "fun", "test.ping"))
	if got, _ := get("m2", "test.ping,disk.usage").(*ordered.Map); got.Len() != 1 || got.Has("test.ping") {
		t.Errorf("after _mine_delete of test.ping (update kept disk.usage): %v", got.Keys())
	}
	if r := ask["m1"](ordered.FromPairs("cmd", protocol.CmdMineFlush, "id", "m1")); r != true {
		t.Errorf("_mine_flush = %v", r)
	}
	if r := ask["m1"](ordered.FromPairs("cmd", protocol.CmdMineFlush, "id", "m1")); r != false {
		t.Errorf("second _mine_flush = %v, want False as Salt's localfs flush", r)
	}
	if got, _ := get("m2", "disk.usage").(*ordered.Map); got.Len() != 0 {
		t.Errorf("after flush: %v", got.Keys())
	}
}

// sameMap compares ordered maps by their msgpack encoding, so key order
// counts as it does on the wire.
var sameMap = cmp.Comparer(func(a, b *ordered.Map) bool {
	x, errX := protocol.Marshal(a)
	y, errY := protocol.Marshal(b)
	return errX == nil && errY == nil && bytes.Equal(x, y)
})
