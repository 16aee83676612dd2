package run

import (
	"context"
	"log/slog"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/compile"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/states"
)

// Chunk is a low chunk.
type Chunk = compile.Chunk

// Runner runs one state job. It is not safe for concurrent use.
type Runner struct {
	// States resolves state functions.
	States *states.Registry
	// Env is the job environment; Env.Test is the job's test=True.
	Env *modules.Env
	// Failhard is the minion's failhard option.
	Failhard bool
	// Log receives Salt's state log lines; nil discards them.
	Log *slog.Logger
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// Template renders templates for state functions (states.Call.Template).
	Template states.TemplateFunc
	// Mock reports every state as "Not called, mocked" instead of running
	// it (state.apply mock=True), keeping requisites and ordering.
	Mock bool
	// Refresh, when set, gathers grains and/or compiles pillar again into
	// env after a state with reload_grains or reload_pillar (Salt's
	// check_refresh); nil ignores those keywords.
	Refresh func(ctx context.Context, env *modules.Env, grains, pillar bool)

	runNum   int
	pre      map[string]*ordered.Map
	active   map[string]bool
	running  *Results
	chunks   []Chunk
	index    chunkIndex
	failhard bool
	procs    map[*ordered.Map]*parallelProc // parallel states not yet reconciled
	aggOpt   *any                           // state_aggregate, once read
}

func (r *Runner) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *Runner) log() *slog.Logger {
	if r.Log != nil {
		return r.Log
	}
	if r.Env != nil && r.Env.Log != nil {
		return r.Env.Log
	}
	return slog.New(slog.DiscardHandler)
}

// CallHigh compiles high data and runs it (salt/state.py call_high).
// High data that does not compile is a *CompileError: nothing ran. A
// *FatalError aborts the whole job (an invalid keyword argument to a
// state function).
func (r *Runner) CallHigh(ctx context.Context, high *ordered.Map) (*Results, error) {
	errs := compile.ReconcileExtend(high, false)
	errs = append(errs, compile.VerifyHigh(high)...)
	if err := compileError(errs); err != nil {
		return nil, err
	}
	errs = compile.RequisiteIn(high)
	compile.ApplyExclude(high)
	if err := compileError(errs); err != nil {
		return nil, err
	}
	chunks := compile.CompileHigh(high)
	res, err := r.CallChunks(ctx, chunks)
	if err != nil {
		return nil, err
	}
	if err := r.CallListen(ctx, chunks, res); err != nil {
		return nil, err
	}
	return res, nil
}

// prepare sets the runner up for a run over chunks. Prereq returns (pre)
// outlive it: the listeners' runner is handed its parent's.
func (r *Runner) prepare(chunks []Chunk) {
	if r.pre == nil {
		r.pre = map[string]*ordered.Map{}
	}
	r.chunks = chunks
	r.index = chunkIndex{}
	r.running = NewResults()
	r.active = map[string]bool{}
	r.failhard = false
}

// CallChunks runs ordered chunks (call_chunks).
func (r *Runner) CallChunks(ctx context.Context, chunks []Chunk) (*Results, error) {
	r.prepare(chunks)
	defer r.reconcileAll()
	for _, low := range r.dropDisabled(chunks) {
		if r.failhard {
			break
		}
		tag := states.Tag(low)
		if !r.running.Has(tag) {
			if err := r.callChunk(ctx, low, 0); err != nil {
				return nil, err
			}
			if r.checkFailhard(low) {
				break
			}
		}
		r.active = map[string]bool{}
	}
	return r.running, nil
}

// RunChunk runs one chunk with its requisites against the given chunk
// list, as state.sls_id does with call_chunk.
func (r *Runner) RunChunk(ctx context.Context, low Chunk, chunks []Chunk) (*Results, error) {
	r.prepare(chunks)
	err := r.callChunk(ctx, low, 0)
	r.reconcileAll()
	return r.running, err
}

// checkFailhard reports whether low failed with failhard set (check_failhard).
func (r *Runner) checkFailhard(low Chunk) bool {
	if r.Env != nil && r.Env.Test {
		return false
	}
	fh, ok := low.Get("failhard")
	if !ok {
		fh = r.Failhard
	}
	if !modules.Truthy(fh) {
		return false
	}
	ret, ok := r.running.Get(states.Tag(low))
	if !ok {
		return false
	}
	res := ret.Value("result")
	return res != nil && res != true
}

func (r *Runner) nextRunNum() int {
	n := r.runNum
	r.runNum++
	return n
}

// notRun builds the return of a state that did not run (Salt's dicts in
// call_chunk with _calculate_fake_duration).
func (r *Runner) notRun(low Chunk, result any, comment string, stateRan bool) *ordered.Map {
	start := r.now()
	ret := ordered.FromPairs("changes", ordered.New(), "result", result,
		"duration", durationMS(r.now().Sub(start)), "start_time", startTime(start), "comment", comment)
	if !stateRan {
		ret.Set("__state_ran__", false)
	}
	ret.Set("__run_num__", r.nextRunNum())
	for _, k := range []string{"__sls__", "__id__", "name"} {
		ret.Set(k, low.Value(k))
	}
	return ret
}

func startTime(t time.Time) string { return t.Format("15:04:05.000000") }

func durationMS(d time.Duration) float64 { return float64(d.Microseconds()) / 1000.0 }

// Call runs one chunk directly, without requisites, as state.single does
// with State.call.
func (r *Runner) Call(ctx context.Context, low Chunk) (*Results, error) {
	r.prepare([]Chunk{low})
	ret, err := r.call(ctx, low, nil, 1)
	r.reconcileAll()
	if err != nil {
		return nil, err
	}
	r.running.Set(states.Tag(low), ret)
	return r.running, nil
}
