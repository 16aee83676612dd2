package disk

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
)

const dfP = `Filesystem     1024-blocks     Used Available Capacity Mounted on
/dev/sda1         41152736 12345678  26690022      32% /
my fs             1000      10       990         1% /mnt/x
/dev/mapper/very-long-name
                  2000     100      1900         5% /srv
`

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		got  *ordered.Map
		want string
	}{
		{"usage", parseUsage(dfP), `{"/":{"filesystem":"/dev/sda1","1K-blocks":"41152736","used":"12345678","available":"26690022","capacity":"32%"},"/mnt/x":{"filesystem":"my fs","1K-blocks":"1000","used":"10","available":"990","capacity":"1%"},"/srv":{"filesystem":"/dev/mapper/very-long-name","1K-blocks":"2000","used":"100","available":"1900","capacity":"5%"}}`},
		{"percent", parsePercent(dfP), `{"/":"32%","/mnt/x":"1%"}`},
		{"inodes", parseInodes("Filesystem Inodes IUsed IFree IUse% Mounted on\n/dev/sda1 100 10 90 10% /\n"),
			`{"/":{"inodes":"100","used":"10","free":"90","use":"10%","filesystem":"/dev/sda1"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, _ := json.Marshal(tt.got)
			if diff := cmp.Diff(tt.want, string(b)); diff != "" {
				t.Error(diff)
			}
		})
	}
}

func TestCleanFlags(t *testing.T) {
	for _, tt := range []struct {
		in   any
		want string
		ok   bool
	}{{nil, "", true}, {"ah", "ah", true}, {[]any{"i", "T"}, "iT", true}, {"z", "", false}, {"a;rm", "", false}} {
		got, err := cleanFlags(tt.in, "disk.usage")
		if got != tt.want || (err == nil) != tt.ok {
			t.Errorf("cleanFlags(%v) = %q, %v", tt.in, got, err)
		}
	}
}

func TestLive(t *testing.T) {
	env := (&modules.Env{Pillar: ordered.New(), Opts: ordered.New(), Registry: modules.Default,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Context: map[string]any{}}).WithGrains(ordered.New())
	ctx := context.Background()
	u, err := env.Run(ctx, "disk.usage", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	root, ok := u.(*ordered.Map).Get("/")
	if !ok || !root.(*ordered.Map).Has("1K-blocks") {
		t.Errorf("disk.usage has no / entry: %v", u)
	}
	p, err := env.Run(ctx, "disk.percent", []any{"/"}, nil)
	if s, _ := p.(string); err != nil || len(s) < 2 || s[len(s)-1] != '%' {
		t.Errorf("disk.percent / = %v, %v", p, err)
	}
	i, err := env.Run(ctx, "disk.inodeusage", nil, nil)
	if err != nil || !modules.Truthy(i) {
		t.Errorf("disk.inodeusage = %v, %v", i, err)
	}
}

func FuzzDF(f *testing.F) {
	f.Add(dfP)
	f.Fuzz(func(t *testing.T, s string) {
		parseUsage(s)
		parsePercent(s)
		parseInodes(s)
	})
}
