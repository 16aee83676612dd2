package client

import (
	"context"
	"math/rand/v2"
	"slices"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/master"
)

// Subset is LocalClient.cmd_subset (salt/client/__init__.py): ask the
// target for its functions (sys.list_functions), shuffle the minions
// that answered and keep the first n of them that have the job's
// function, as a list target. No minion having it leaves an empty
// target, which publishes to nobody as in Salt.
func (s *Session) Subset(ctx context.Context, req master.PublishRequest, n int) (master.PublishRequest, error) {
	ask := req
	ask.Fun, ask.Arg, ask.Ret, ask.RetConfig, ask.RetKwargs = "sys.list_functions", nil, "", "", nil
	jid, minions, err := s.Pub.Publish(ctx, ask)
	if err != nil {
		return req, err
	}
	var answered []string
	has := map[string]bool{}
	if _, _, err := s.Collect(ctx, jid, minions, ask, func(id string, data *ordered.Map) {
		answered = append(answered, id)
		fns, _ := data.Value("return").([]any)
		has[id] = slices.Contains(fns, any(req.Fun))
	}); err != nil {
		return req, err
	}
	rand.Shuffle(len(answered), func(i, j int) { answered[i], answered[j] = answered[j], answered[i] })
	pick := []any{}
	for _, id := range answered {
		if len(pick) >= n {
			break
		}
		if has[id] {
			pick = append(pick, id)
		}
	}
	req.Tgt, req.TgtType = pick, "list"
	return req, nil
}
