package minion_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/config"
	"github.com/brinesalt/brine/master"
	"github.com/brinesalt/brine/minion"
)

// lockedBuffer is a log destination the minion's goroutines share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestJobLogsReachTheMinionLog: a line a function logs (test.raise_exception
// of an unknown name logs "No such exception") while it runs
// lands in the minion's own log with the job's id, as Salt's jobs log
// through the minion's logging.
func TestJobLogsReachTheMinionLog(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	m, mo := startAutoAcceptMaster(ctx, t, dir)
	c := config.DefaultMinion(dir)
	c.ID, c.Masters, c.MasterPort, c.PublishPort = "m1", []string{"127.0.0.1"}, mo.RetPort, mo.PublishPort
	c.PKIDir, c.CacheDir = dir+"/minion", dir+"/mcache"
	c.AcceptanceWaitTime = 200 * time.Millisecond
	var logs lockedBuffer
	mn, err := minion.New(minion.Options{Config: c, Log: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	mctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = mn.Run(mctx) }()
	defer func() { stop(); <-done }()
	for m.Subscribers() < 1 {
		if ctx.Err() != nil {
			t.Fatal("the minion did not connect")
		}
		time.Sleep(20 * time.Millisecond)
	}
	ch, unsub := m.Bus().Subscribe()
	defer unsub()
	jid, _, err := m.Publish(ctx, master.PublishRequest{Tgt: "m1", Fun: "test.raise_exception", Arg: []any{"NoSuchThing"}})
	if err != nil {
		t.Fatal(err)
	}
	for ev := range ch {
		if ev.Tag == "salt/job/"+jid+"/ret/m1" {
			break
		}
	}
	line := ""
	for l := range strings.SplitSeq(logs.String(), "\n") {
		if strings.Contains(l, "No such exception") {
			line = l
		}
	}
	if !strings.Contains(line, "jid="+jid) || !strings.Contains(line, "name=NoSuchThing") || !strings.Contains(line, "level=ERROR") {
		t.Fatalf("the job's log line is %q in the minion's log:\n%s", line, logs.String())
	}
}
