package netapi

import (
	"context"
	"fmt"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/saltyaml"
	"github.com/brinesalt/brine/master"
)

// callInternal are the lowstate keys that are not the function's
// arguments (salt/client/mixins.py CLIENT_INTERNAL_KEYWORDS, less
// "match", which wheel functions take as an argument, plus NetapiClient
// runner()'s own timeout).
var callInternal = []string{"client", "cmd", "eauth", "fun", "kwarg", "token", "__jid__", "__tag__", "__user__",
	"username", "password", "full_return", "print_event", "timeout"}

// call runs the runner, runner_async, wheel and wheel_async clients on
// the master, which checks the caller's rights. Runner and wheel
// functions take keyword arguments: the chunk's other keys, or, when the
// chunk has both, its "arg" and "kwarg" (SyncClientMixin.low).
func (s *Server) call(ctx context.Context, name string, chunk *ordered.Map, creds master.Creds) (any, error) {
	fun, ok := chunk.Value("fun").(string)
	if !ok {
		method := strings.TrimSuffix(name, "_async")
		return nil, httpError(400, fmt.Sprintf("%s takes at least 1 argument (0 given)", method))
	}
	kind := strings.TrimSuffix(name, "_async")
	req := master.CallRequest{Fun: fun, Auth: creds, Async: strings.HasSuffix(name, "_async")}
	if kind == "runner" {
		req.Arg, req.Kwarg = runnerArgs(chunk)
	} else if args, ok := chunk.Value("arg").([]any); ok && chunk.Has("kwarg") {
		req.Arg = args
		req.Kwarg, _ = chunk.Value("kwarg").(*ordered.Map)
	} else {
		req.Kwarg = callKwargs(chunk)
	}
	if name == "runner" && truthy(chunk.Value("full_return")) {
		return s.runnerFull(ctx, chunk, req)
	}
	if name == "runner" {
		var cancel context.CancelFunc
		var err error
		if ctx, cancel, err = chunkTimeout(ctx, chunk); err != nil {
			return nil, err
		}
		defer cancel()
	}
	var ret any
	err := s.pool.with(ctx, func(c *master.Client) error {
		var e error
		ret, e = c.Call(ctx, kind, req)
		return e
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, httpError(504, "")
		}
		return nil, authErr(err)
	}
	return ret, nil
}

// runnerArgs is RunnerClient._reformat_low (salt/runner.py), which takes
// a runner's arguments in every style at once: "arg" through parse_input
// (name=value strings, and dicts marked __kwarg__, are keyword
// arguments), then the "kwarg" mapping (pepper's
// {"fun": "jobs.lookup_jid", "kwarg": {"jid": …}}), then the chunk's other
// keys.
func runnerArgs(chunk *ordered.Map) ([]any, *ordered.Map) {
	pos, kw := []any{}, ordered.New()
	merge := func(m *ordered.Map) {
		m.Range(func(k, v any) bool {
			if ordered.KeyString(k) != "__kwarg__" {
				kw.Set(k, v)
			}
			return true
		})
	}
	args, _ := chunk.Value("arg").([]any)
	for _, a := range args {
		switch x := a.(type) {
		case string:
			p, k := saltyaml.ParseInput([]string{x})
			pos = append(pos, p...)
			merge(k)
		case *ordered.Map:
			if x.Value("__kwarg__") == true {
				merge(x)
			} else {
				pos = append(pos, x)
			}
		default:
			pos = append(pos, x)
		}
	}
	if m, ok := chunk.Value("kwarg").(*ordered.Map); ok {
		merge(m)
	}
	rest := callKwargs(chunk)
	rest.Delete("arg")
	merge(rest)
	return pos, kw
}

// callKwargs are the chunk's keys that are the function's arguments.
func callKwargs(chunk *ordered.Map) *ordered.Map {
	kw := ordered.New()
	chunk.Range(func(k, v any) bool {
		key := ordered.KeyString(k)
		for _, in := range callInternal {
			if in == key {
				return true
			}
		}
		kw.Set(key, v)
		return true
	})
	return kw
}

// runnerFull is RunnerClient.cmd_sync with full_return: the call runs
// asynchronously and the answer is its salt/run/<jid>/ret event, {"data":
// {...}, "tag"}; no event within the timeout is Salt's
// SaltClientTimeout, a 504.
func (s *Server) runnerFull(ctx context.Context, chunk *ordered.Map, req master.CallRequest) (any, error) {
	req.Async = true
	sub := s.hub.subscribe(256, true)
	defer s.hub.unsubscribe(sub)
	sub.begin()
	var ret any
	err := s.pool.with(ctx, func(c *master.Client) error {
		var e error
		ret, e = c.Call(ctx, "runner", req)
		return e
	})
	jid := ""
	if m, ok := ret.(*ordered.Map); ok {
		jid, _ = m.Value("jid").(string)
	}
	sub.end(jid)
	if err != nil {
		return nil, authErr(err)
	}
	ctx, cancel, err := chunkTimeout(ctx, chunk)
	if err != nil {
		return nil, err
	}
	defer cancel()
	want := "salt/run/" + jid + "/ret"
	for {
		select {
		case <-ctx.Done():
			return nil, httpError(504, fmt.Sprintf("RunnerClient job '%s' timed out", jid))
		case ev, ok := <-sub.evs:
			if !ok {
				return nil, errMasterDown(fmt.Errorf("event stream closed"))
			}
			if ev.Tag == want {
				return ordered.FromPairs("data", ev.Data, "tag", ev.Tag), nil
			}
		}
	}
}

// chunkTimeout bounds ctx by the chunk's timeout (seconds), when it has
// one.
func chunkTimeout(ctx context.Context, chunk *ordered.Map) (context.Context, context.CancelFunc, error) {
	d, err := secondsOpt(chunk, "timeout", 0)
	if err != nil {
		return ctx, func() {}, err
	}
	if d <= 0 {
		return ctx, func() {}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	return ctx, cancel, nil
}
