// Package client is the part of Salt's LocalClient (salt/client/__init__.py)
// and batch runner (salt/cli/batch.py) that both the salt command and
// salt-api drive: a session of one publisher and one event stream on the
// master's local socket, collecting a job's returns with the find_job
// checks of get_iter_returns, batches, and subsets.
//
// It prints nothing: callers pass hooks and render what they receive.
package client

import (
	"context"
	"errors"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/master"
)

// Publisher publishes jobs to the master (master.Client.Publish).
type Publisher interface {
	Publish(ctx context.Context, p master.PublishRequest) (jid string, minions []string, err error)
}

// Session is a publisher and the master's event stream, subscribed
// before anything is published so no return can be missed.
type Session struct {
	Pub    Publisher
	Events <-chan master.Event
	// Timeout is Salt's timeout: how long to wait after the last sign
	// of life before asking silent minions with saltutil.find_job.
	Timeout time.Duration
	// GatherJobTimeout is how long a find_job round waits for answers.
	GatherJobTimeout time.Duration
	close            func()
}

// Close ends the session's connections, when it owns them.
func (s *Session) Close() {
	if s.close != nil {
		s.close()
	}
}

// Connect opens a session on the master's local socket at sock: one
// connection for the event stream and one for publishing.
func Connect(ctx context.Context, sock string, timeout, gatherJobTimeout time.Duration) (*Session, error) {
	ectx, cancel := context.WithCancel(ctx)
	ev, err := master.Dial(ectx, sock)
	if err != nil {
		cancel()
		return nil, err
	}
	ch, err := ev.Events(ectx)
	if err != nil {
		ev.Close()
		cancel()
		return nil, err
	}
	pub, err := master.Dial(ctx, sock)
	if err != nil {
		ev.Close()
		cancel()
		return nil, err
	}
	return &Session{Pub: pub, Events: ch, Timeout: timeout, GatherJobTimeout: gatherJobTimeout,
		close: func() { cancel(); ev.Close(); pub.Close() }}, nil
}

// ErrMasterLost is the master going away while a job's returns are
// awaited: its event stream closed, or it refused a find_job publish.
var ErrMasterLost = errors.New("the connection to the master was lost")

// ReturnFunc sees one minion's return event data ({"return", "retcode",
// "success", "out", ...}) once.
type ReturnFunc func(id string, data *ordered.Map)
