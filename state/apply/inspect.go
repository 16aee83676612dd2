package apply

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/compile"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/run"
)

// low is state.low: verify one low chunk and call it without requisites
// (State.call). It returns the state's own return dict, not a dict keyed
// by tag. Salt's state.low only sets the retcode for invalid data: its
// check_result looks at a single return's first value ("name"), which
// is not a dict, so a failed state still exits 0.
func (m *module) low(ctx context.Context, c *modules.Call) (any, error) {
	data, ok := c.Arg("data").(*ordered.Map)
	if !ok {
		return nil, modules.Invalidf("Low data must be a dictionary")
	}
	low := ordered.DeepCopy(data).(*ordered.Map)
	// The State that state.low builds reads only the minion's options:
	// keyword arguments such as test= do not reach it.
	j, err := m.newJob(ctx, c.Env, ordered.New(), nil)
	if err != nil {
		return nil, err
	}
	r, bad := j.verifiedRunner(low)
	if r == nil {
		return bad, nil
	}
	if !low.Has("__id__") {
		// State.call ends with ret["__id__"] = low["__id__"]: Salt
		// raises KeyError after running the state; Brine refuses first.
		return nil, modules.Errorf("low data has no __id__ (State.call needs it): %s", ordered.KeyString(low.Value("name")))
	}
	res, err := r.Call(ctx, low)
	if err != nil {
		return nil, err
	}
	for _, t := range res.Tags() {
		ret, _ := res.Get(t)
		return ret, nil
	}
	return ordered.New(), nil
}

// localSLS serves one SLS name from a file on the minion's disk and the
// rest from the file server (render_state with local=True).
type localSLS struct {
	compile.Source
	sls, path string
}

func (l localSLS) FindSLS(ctx context.Context, sls, saltenv string) (string, []byte, bool, error) {
	if sls != l.sls {
		return l.Source.FindSLS(ctx, sls, saltenv)
	}
	b, err := os.ReadFile(l.path)
	if err != nil {
		return "", nil, false, nil
	}
	return l.path, b, true, nil
}

// template is state.template: render an SLS file that is on the
// minion's own disk (".sls" is appended when missing) and run it. Its
// states carry the path as their __sls__, as in Salt.
func (m *module) template(ctx context.Context, c *modules.Call) (any, error) {
	tem := c.Str("tem")
	if !strings.HasSuffix(tem, ".sls") {
		tem += ".sls"
	}
	kw := c.Kwargs.Copy()
	kw.Delete("env")
	j, err := m.newJob(ctx, c.Env, kw, nil)
	if err != nil {
		return nil, err
	}
	if errs := j.pillarErrors(kw); len(errs) > 0 {
		return nil, errPillar(c.Env)
	}
	if st, err := os.Stat(tem); err != nil || !st.Mode().IsRegular() {
		setRetcode(c.Env, exCompilerError)
		return []any{fmt.Sprintf("Specified SLS %s on local filesystem cannot be found.", tem)}, nil
	}
	saltenv := j.saltenv
	if saltenv == "" {
		saltenv = "base"
	}
	hs := j.highstate()
	hs.Files = localSLS{Source: hs.Files, sls: tem, path: tem}
	high, errs := hs.RenderHighstate(ctx, compile.Single(saltenv, []string{tem}))
	if len(errs) > 0 {
		setRetcode(c.Env, exCompilerError)
		return strList(errs), nil
	}
	return j.callHigh(ctx, high)
}

// top is state.top: a highstate from another top file (opts state_top),
// read from the saltenv given, or from every saltenv.
func (m *module) top(ctx context.Context, c *modules.Call) (any, error) {
	j, err := m.newJob(ctx, c.Env, c.Kwargs, c.Arg("test"))
	if err != nil {
		return nil, err
	}
	j.topFile = strings.TrimPrefix(c.Str("topfn"), "salt://")
	if s, ok := c.Kwargs.Value("saltenv").(string); ok {
		j.topSaltenv = s
	}
	return j.runHighstate(ctx, c.Kwargs)
}

// showStates is state.show_states: the SLS names of the highstate's low
// chunks, first appearance first.
func (m *module) showStates(ctx context.Context, c *modules.Call) (any, error) {
	res, err := m.showLowstate(ctx, c)
	if err != nil {
		return nil, err
	}
	list, _ := res.([]any)
	seen := map[string]bool{}
	out := []any{}
	for _, v := range list {
		chunk, ok := v.(compile.Chunk)
		if !ok {
			setRetcode(c.Env, exCompilerError)
			return list, nil
		}
		sls := ordered.KeyString(chunk.Value("__sls__"))
		if !seen[sls] {
			seen[sls] = true
			out = append(out, sls)
		}
	}
	return out, nil
}

// showStateUsage is state.show_state_usage (compile_state_usage): per
// saltenv, the available SLS files the top file uses and those it does
// not.
func (m *module) showStateUsage(ctx context.Context, c *modules.Call) (any, error) {
	j, err := m.newJob(ctx, c.Env, c.Kwargs, nil)
	if err != nil {
		return nil, err
	}
	matches, errs, err := j.topMatches(ctx)
	if err != nil || errs != nil {
		return errs, err
	}
	out := ordered.New()
	for _, env := range j.files.Envs() {
		used := map[string]bool{}
		for _, s := range matches.SLS[env] {
			used[s] = true
		}
		u := ordered.FromPairs("used", []any{}, "unused", []any{}, "count_all", 0, "count_used", 0, "count_unused", 0)
		for _, s := range j.files.ListStates(env) {
			key := "unused"
			if used[s] {
				key = "used"
			}
			u.Set(key, append(u.Value(key).([]any), s))
			u.Set("count_all", u.Value("count_all").(int)+1)
			u.Set("count_"+key, u.Value("count_"+key).(int)+1)
		}
		out.Set(env, u)
	}
	stateRetcode(c.Env, out)
	return out, nil
}

// idExists is state.id_exists: whether every ID in ids (a list or a
// comma-separated string) is declared in the SLS files mods.
func (m *module) idExists(ctx context.Context, c *modules.Call) (any, error) {
	_, high, errs, err := m.renderMods(ctx, c)
	if err != nil {
		return nil, err
	}
	if len(errs) > 0 {
		// Salt indexes the error strings as chunks and raises.
		return nil, modules.Errorf("%s", strings.Join(errs, "\n"))
	}
	have := map[string]bool{}
	for _, ch := range compile.CompileHigh(high) {
		have[ordered.KeyString(ch.Value("__id__"))] = true
	}
	for _, id := range splitStrings(c.Arg("ids")) {
		if !have[id] {
			return false, nil
		}
	}
	return true, nil
}

// clearCache is state.clear_cache: remove the state cache files
// (<cachedir>/*.cache.p, written by state runs with cache=True) and
// return their names.
func (m *module) clearCache(_ context.Context, c *modules.Call) (any, error) {
	dir := cachedir(c.Env)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, modules.Errorf("list %s: %w", dir, err)
	}
	out := []any{}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".cache.p") || !e.Type().IsRegular() {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
			return nil, modules.Errorf("remove %s: %w", e.Name(), err)
		}
		out = append(out, e.Name())
	}
	return out, nil
}

func cachedir(env *modules.Env) string {
	if s, ok := env.Opts.Value("cachedir").(string); ok && s != "" {
		return s
	}
	return "/var/cache/salt/minion"
}

// running is state.running: a message for every state job running now
// (saltutil.is_running "state.*"), or [] with concurrent=True.
func (m *module) running(ctx context.Context, c *modules.Call) (any, error) {
	out := []any{}
	if c.Bool("concurrent") {
		return out, nil
	}
	res, err := c.Env.Run(ctx, "saltutil.is_running", []any{"state.*"}, nil)
	if err != nil {
		return nil, fmt.Errorf("saltutil.is_running: %w", err)
	}
	jobs, _ := res.([]any)
	self, _ := c.Pub.Value("__pub_jid").(string)
	for _, j := range jobs {
		jm, ok := j.(*ordered.Map)
		if !ok {
			continue
		}
		jid := ordered.KeyString(jm.Value("jid"))
		if jid == self {
			// Salt's proc-file reader leaves out the asking job itself.
			continue
		}
		out = append(out, fmt.Sprintf("The function \"%s\" is running as PID %s and was started at %s with jid %s",
			ordered.KeyString(jm.Value("fun")), ordered.KeyString(jm.Value("pid")), jidToTime(jid), jid))
	}
	return out, nil
}

// jidToTime is salt.utils.jid.jid_to_time: "2026, Dec 01 03:22:10.123456"
// for a 20-digit jid, "" for anything else.
func jidToTime(jid string) string {
	if len(jid) != 20 {
		return ""
	}
	for _, r := range jid {
		if r < '0' || r > '9' {
			return ""
		}
	}
	months := []string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}
	mon := int(jid[4]-'0')*10 + int(jid[5]-'0')
	if mon < 1 || mon > 12 {
		return ""
	}
	return fmt.Sprintf("%s, %s %s %s:%s:%s.%s", jid[:4], months[mon-1], jid[6:8], jid[8:10], jid[10:12], jid[12:14], jid[14:])
}

// verifiedRunner returns the job's runner once low passes verify_data,
// or else the error list to return (retcode 1).
func (j *job) verifiedRunner(low compile.Chunk) (*run.Runner, any) {
	r := j.runner()
	if errs := r.VerifyData(low); len(errs) > 0 {
		setRetcode(j.env, exCompilerError)
		return nil, strList(errs)
	}
	return r, nil
}
