package reactor

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
)

// threadNice reads the calling thread's nice value from
// /proc/thread-self/stat (field 19).
func threadNice(t *testing.T) int {
	b, err := os.ReadFile("/proc/thread-self/stat")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	n, err := strconv.Atoi(fields[16])
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// niceRecorder records the nice value of the thread a reaction runs on.
type niceRecorder struct {
	t    *testing.T
	mu   sync.Mutex
	seen []int
}

func (n *niceRecorder) React(context.Context, *Call) error {
	v := threadNice(n.t)
	n.mu.Lock()
	n.seen = append(n.seen, v)
	n.mu.Unlock()
	return nil
}

func TestNicenessLowersTheWorkersOnly(t *testing.T) {
	dir := t.TempDir()
	fn := filepath.Join(dir, "r.sls")
	os.WriteFile(fn, []byte("x:\n  local.test.ping:\n    - tgt: '*'\n"), 0o600)
	base := threadNice(t)
	rec := &niceRecorder{t: t}
	r := New(Options{Map: []Entry{{Tag: "t", SLS: []string{fn}}}, Workers: 2, Niceness: 4, Exec: rec})
	ctx, cancel := context.WithCancel(context.Background())
	r.Start(ctx)
	for range 4 {
		r.Submit("t", ordered.New())
	}
	waitFor(t, func() bool { return r.Stats().Done == 4 })
	cancel()
	r.Wait()
	for _, v := range rec.seen {
		if v != base+4 && v != 19 {
			t.Errorf("a reaction ran at nice %d, want %d (the test's %d + 4)", v, base+4, base)
		}
	}
	if len(rec.seen) != 4 {
		t.Errorf("reactions seen %d, want 4", len(rec.seen))
	}
	if got := threadNice(t); got != base {
		t.Errorf("the test's own thread is at nice %d, was %d", got, base)
	}
}
