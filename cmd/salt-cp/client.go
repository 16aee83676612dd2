package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/brinesalt/brine/client"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/master"
)

// local is the part of LocalClient salt-cp uses: one connection that
// publishes and one that streams the master's events, kept for the
// whole copy so that hundreds of chunk jobs do not each reconnect.
type local struct {
	// orderMasters: the master has syndics, whose minions only the
	// syndics' reports name (client.Session.Collect waits for them).
	orderMasters bool
	pub          *master.Client
	events       <-chan master.Event
	timeout      time.Duration
	closeFn      func()
}

func dialLocal(ctx context.Context, sock string, timeout time.Duration) (*local, error) {
	ectx, cancel := context.WithCancel(ctx)
	ev, err := master.Dial(ectx, sock)
	if err != nil {
		cancel()
		return nil, err
	}
	ch, err := ev.Events(ectx)
	if err == nil {
		var pub *master.Client
		if pub, err = master.Dial(ctx, sock); err == nil {
			l := &local{pub: pub, events: ch, timeout: timeout, closeFn: func() { cancel(); ev.Close(); pub.Close() }}
			info, err := pub.Syndics(ctx)
			l.orderMasters = err == nil && info.OrderMasters
			return l, nil
		}
	}
	ev.Close()
	cancel()
	return nil, err
}

func (l *local) close() { l.closeFn() }

// cmd is LocalClient.cmd: publish, then gather {minion: return} until
// every expected minion answered or timeout passed without an answer.
// Minions in skip are not waited for (their answers are still taken
// while others are awaited). The expected minions come back too, for
// the "Publish failed" message.
func (l *local) cmd(ctx context.Context, req master.PublishRequest, skip map[string]bool) (*ordered.Map, []string, error) {
	jid, minions, err := l.pub.Publish(ctx, req)
	if err != nil {
		return nil, nil, fmt.Errorf("publish %s: %w", req.Fun, err)
	}
	got := ordered.New()
	if l.orderMasters {
		return l.collectTiers(ctx, jid, minions, req, skip)
	}
	if len(minions) == 0 {
		return got, minions, nil
	}
	prefix := "salt/job/" + jid + "/ret/"
	waiting := 0
	for _, id := range minions {
		if !skip[id] {
			waiting++
		}
	}
	t := time.NewTimer(l.timeout)
	defer t.Stop()
	for waiting > 0 {
		select {
		case <-ctx.Done():
			return got, minions, context.Cause(ctx)
		case <-t.C:
			return got, minions, nil
		case ev, ok := <-l.events:
			if !ok {
				return got, minions, fmt.Errorf("event stream from the master closed")
			}
			if id, ok := strings.CutPrefix(ev.Tag, prefix); ok && !got.Has(id) {
				got.Set(id, ev.Data.Value("return"))
				if !skip[id] {
					waiting--
				}
				t.Reset(l.timeout)
			}
		}
	}
	return got, minions, nil
}

// collectTiers is cmd's gathering on a master of masters: the session's
// Collect learns the lower tiers' minions from their syndics, and with
// timeout as both its timeout and its find_job wait.
func (l *local) collectTiers(ctx context.Context, jid string, minions []string, req master.PublishRequest, skip map[string]bool) (*ordered.Map, []string, error) {
	s := &client.Session{Pub: l.pub, Events: l.events, Timeout: l.timeout, GatherJobTimeout: l.timeout}
	var wait []string
	for _, id := range minions {
		if !skip[id] {
			wait = append(wait, id)
		}
	}
	got := ordered.New()
	_, expected, err := s.Collect(ctx, jid, wait, req, func(id string, data *ordered.Map) { got.Set(id, data.Value("return")) })
	return got, expected, err
}
