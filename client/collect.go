package client

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
	"github.com/brinesalt/brine/master"
)

// Collect is LocalClient.get_iter_returns: hand each return of job jid
// to onReturn as it comes; when Timeout passes, ask the silent minions
// with saltutil.find_job (published as req's user, with req's
// credentials, for GatherJobTimeout) whether they still run the job,
// and keep waiting another Timeout while any does. It returns each
// returned minion's retcode and the minions expected, with any minion
// that returned unexpectedly added. The master closing the event
// stream, or refusing the find_job publish, ends it with ErrMasterLost
// (wrapping the refusal); ctx ending ends it without error.
func (s *Session) Collect(ctx context.Context, jid string, minions []string, req master.PublishRequest,
	onReturn ReturnFunc) (map[string]int, []string, error) {
	got := map[string]int{}
	tr := s.newTiers(ctx, jid)
	minions = tr.Expected(slices.Clone(minions))
	expect := func(ids ...string) {
		for _, id := range ids {
			if !slices.Contains(minions, id) {
				minions = append(minions, id)
			}
		}
	}
	retPrefix := "salt/job/" + jid + "/ret/"
	findPrefix := ""
	running := false
	deadline := time.Now().Add(s.Timeout)
	for {
		waiting, silentSyndics := tr.Pending(time.Now())
		expect(silentSyndics...)
		if len(got) >= len(minions) && !waiting {
			return got, minions, nil
		}
		wake := deadline
		if waiting && tr.Deadline().Before(wake) {
			wake = tr.Deadline()
		}
		t := time.NewTimer(max(time.Until(wake), 0))
		select {
		case <-ctx.Done():
			t.Stop()
			return got, minions, nil
		case ev, ok := <-s.Events:
			t.Stop()
			if !ok {
				if ctx.Err() != nil {
					return got, minions, nil
				}
				return got, minions, ErrMasterLost
			}
			if id, ok := strings.CutPrefix(ev.Tag, retPrefix); ok {
				if _, dup := got[id]; !dup {
					rc, _ := protocol.AsInt(ev.Data.Value("retcode"))
					got[id] = rc
					onReturn(id, ev.Data)
					expect(id)
				}
			} else if findPrefix != "" && strings.HasPrefix(ev.Tag, findPrefix) {
				if r, ok := ev.Data.Value("return").(*ordered.Map); ok && r.Len() > 0 {
					running = true
				}
			} else {
				expect(tr.Event(ev.Tag, ev.Data)...)
			}
		case <-t.C:
			if time.Now().Before(deadline) {
				continue // syndic_wait ended first
			}
			if findPrefix != "" {
				// End of a find_job round.
				if !running {
					return got, minions, nil
				}
				findPrefix, running = "", false
				deadline = time.Now().Add(s.Timeout)
				continue
			}
			ids := silent(minions, got)
			if len(ids) == 0 {
				// Only syndic reports are awaited.
				deadline = time.Now().Add(s.Timeout)
				continue
			}
			fj, err := s.findJob(ctx, jid, ids, req)
			if err != nil {
				if ctx.Err() != nil {
					return got, minions, nil
				}
				return got, minions, fmt.Errorf("%w: %w", ErrMasterLost, err)
			}
			findPrefix = "salt/job/" + fj + "/ret/"
			deadline = time.Now().Add(s.GatherJobTimeout + tr.GatherExtra())
		}
	}
}

// findJob publishes saltutil.find_job for jid to the silent minions
// (LocalClient.gather_job_info), with the job's user and credentials.
func (s *Session) findJob(ctx context.Context, jid string, ids []any, req master.PublishRequest) (string, error) {
	fj := master.PublishRequest{Tgt: ids, TgtType: "list", Fun: "saltutil.find_job", Arg: []any{jid}, User: req.User}
	fjid, _, err := s.Pub.Publish(ctx, withAuth(fj, req))
	return fjid, err
}

// silent lists the expected minions that have not returned.
func silent(minions []string, got map[string]int) []any {
	var out []any
	for _, id := range minions {
		if _, ok := got[id]; !ok {
			out = append(out, id)
		}
	}
	return out
}
