package roster

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNodegroupMatcher(t *testing.T) {
	cfg := Config{
		ListNodegroups: map[string]any{"lg": "web1,db1", "both": []any{"db1"}},
		Nodegroups: map[string]any{
			"web": "web* or L@db1", "both": "web*", "nested": "N@web and not web2",
			"grains": "G@os:Debian", "deep": []any{"N@grains", "or", "x"},
		},
	}
	ids := []string{"web1", "web2", "db1", "db2"}
	tests := []struct {
		name string
		want []string
		err  error
	}{
		{"lg", []string{"web1", "db1"}, nil},
		{"both", []string{"db1"}, nil}, // ssh_list_nodegroups first, as Salt
		{"web", []string{"web1", "web2", "db1"}, nil},
		{"nested", []string{"web1", "db1"}, nil},
		{"missing", nil, nil},
		{"grains", nil, ErrUnsupportedTargetType},
		{"deep", nil, ErrUnsupportedTargetType},
	}
	for _, tc := range tests {
		m, err := cfg.matcher(tc.name, TgtNodegroup)
		if !errors.Is(err, tc.err) {
			t.Fatalf("%s: got error %v, want %v", tc.name, err, tc.err)
		}
		if err != nil {
			continue
		}
		var got []string
		for _, id := range ids {
			if m(id) {
				got = append(got, id)
			}
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, d)
		}
	}
}
