package client

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestTimedOut: the batch gives up on every active minion at once, in
// id order, and frees their slots at once.
func TestTimedOut(t *testing.T) {
	var seen []string
	b := &Batch{active: map[string]string{"j2": "m2", "j1": "m1"}, OnTimeout: func(id string) { seen = append(seen, id) }}
	b.TimedOut()
	if d := cmp.Diff([]string{"m1", "m2"}, seen); d != "" {
		t.Errorf("timed out (-want +got):\n%s", d)
	}
	if len(b.active) != 0 || len(b.ready) != 2 || b.code != 0 {
		t.Errorf("active %v, ready %d, code %d", b.active, len(b.ready), b.code)
	}
}

func TestBatchSize(t *testing.T) {
	for _, tc := range []struct {
		spec  string
		total int
		want  int
		bad   bool
	}{
		{"3", 10, 3, false}, {"10%", 10, 1, false}, {"10%", 5, 1, false}, {"50%", 7, 3, false},
		{"0", 10, 0, true}, {"x", 10, 0, true}, {"-5%", 10, 0, true},
	} {
		n, err := BatchSize(tc.spec, tc.total)
		if (err != nil) != tc.bad || n != tc.want {
			t.Errorf("BatchSize(%q, %d) = %d, %v", tc.spec, tc.total, n, err)
		}
	}
}

func TestRetTag(t *testing.T) {
	jid, id, ok := RetTag("salt/job/20260101000000000000/ret/web1")
	if !ok || jid != "20260101000000000000" || id != "web1" {
		t.Errorf("got %q %q %v", jid, id, ok)
	}
	if _, _, ok := RetTag("salt/job/20260101000000000000/new"); ok {
		t.Error("a new-job tag is not a return")
	}
}
