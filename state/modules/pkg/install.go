package pkg

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/modules/pkg/syscmd"
)

// ChangesError is the info Salt attaches to the CommandExecutionError of
// a partly failed install, remove or upgrade: the tool's error output and
// the changes made anyway. It is the cause of the *modules.ExecutionError
// those functions return, for errors.As.
type ChangesError struct {
	Msg     string
	Errors  []string
	Changes *ordered.Map
}

func (e *ChangesError) Error() string { return e.Msg }

// WithoutChanges is the exception's strerror_without_changes, which the
// pkg states put in their comment (salt/exceptions.py).
func (e *ChangesError) WithoutChanges() string {
	if len(e.Errors) == 0 {
		return e.Msg
	}
	return infoPrefix(e.Msg) + nestedErrors(e.Errors)
}

func infoPrefix(msg string) string {
	if msg != "" && !strings.ContainsRune(".?!", rune(msg[len(msg)-1])) {
		msg += "."
	}
	if msg != "" {
		msg += " "
	}
	return msg + "Additional info follows:\n\n"
}

// nestedErrors renders {"errors": [...]} as the nested outputter does.
func nestedErrors(errs []string) string {
	var b strings.Builder
	b.WriteString("errors:")
	for _, e := range errs {
		for i, line := range strings.Split(e, "\n") {
			prefix := "- "
			if i > 0 {
				prefix = "  "
			}
			b.WriteString("\n    " + prefix + line)
		}
	}
	return b.String()
}

func changesError(msg string, errs []string, changes *ordered.Map) error {
	ce := &ChangesError{Msg: msg, Errors: errs, Changes: changes}
	full := infoPrefix(msg) + nestedErrors(errs) + "\nchanges:" + nestedChanges(changes)
	return &modules.ExecutionError{Msg: full, Err: ce}
}

func nestedChanges(m *ordered.Map) string {
	var b strings.Builder
	m.Range(func(k, v any) bool {
		b.WriteString("\n    " + ordered.KeyString(k) + ":")
		if vm, ok := v.(*ordered.Map); ok {
			vm.Range(func(k2, v2 any) bool {
				b.WriteString("\n        " + ordered.KeyString(k2) + ":\n            " + ordered.KeyString(v2))
				return true
			})
		}
		return true
	})
	return b.String()
}

// AsChanges returns the ChangesError behind err, if any.
func AsChanges(err error) (*ChangesError, bool) {
	var ce *ChangesError
	ok := errors.As(err, &ce)
	return ce, ok
}

// installPlan is what pkg.install decided to run.
type installPlan struct {
	targets, downgrade, reinstall []string
	fromrepo                      string
	file                          bool
}

func (m *Module) newJob(c *modules.Call) (*job, error) {
	p, reason := m.providerFor(c.Env)
	if p == nil {
		return nil, modules.Errorf("%s", reason)
	}
	return &job{m: m, c: c, p: p}, nil
}

func (m *Module) listPkgs(ctx context.Context, c *modules.Call) (any, error) {
	j, err := m.newJob(c)
	if err != nil {
		return nil, err
	}
	l, err := j.lists(ctx)
	if err != nil {
		return nil, err
	}
	src := l.current()
	switch {
	case isTrue(c.Arg("removed")):
		src = l.removed
	case isTrue(c.Arg("purge_desired")):
		src = l.purge
	}
	return pkgMap(src, isTrue(c.Arg("versions_as_list"))), nil
}

// version is pkg_resource.version: one name gives a string ("" when not
// installed), several give {name: version}.
func (m *Module) version(ctx context.Context, c *modules.Call) (any, error) {
	j, err := m.newJob(c)
	if err != nil {
		return nil, err
	}
	names := strArgs(c.VarArgs)
	if len(names) == 0 {
		return "", nil
	}
	l, err := j.lists(ctx)
	if err != nil {
		return nil, err
	}
	cur := l.current()
	asList := isTrue(c.Kwargs.Value("versions_as_list"))
	out := ordered.New()
	for _, n := range names {
		vs := cur[n]
		if asList {
			lv := []any{}
			for _, v := range vs {
				lv = append(lv, v)
			}
			out.Set(n, lv)
		} else {
			out.Set(n, strings.Join(vs, ","))
		}
	}
	if len(names) == 1 {
		return out.Value(names[0]), nil
	}
	return out, nil
}

func strArgs(l []any) []string {
	out := make([]string, 0, len(l))
	for _, a := range l {
		out = append(out, ordered.KeyString(a))
	}
	return out
}

// latestVersion is pkg.latest_version: the candidate version for a
// package that is missing or older, "" when the installed one is current.
func (m *Module) latestVersion(ctx context.Context, c *modules.Call) (any, error) {
	j, err := m.newJob(c)
	if err != nil {
		return nil, err
	}
	names := strArgs(c.VarArgs)
	if len(names) == 0 {
		return "", nil
	}
	if _, ok := c.Kwargs.Get("repo"); ok {
		return nil, modules.Invalidf("The 'repo' argument is invalid, use 'fromrepo' instead")
	}
	l, err := j.lists(ctx)
	if err != nil {
		return nil, err
	}
	cur := l.current()
	refresh := true
	if v, ok := c.Kwargs.Get("refresh"); ok {
		refresh = isTrue(v)
	}
	if refresh {
		if _, err := j.refresh(ctx); err != nil {
			return nil, err
		}
	}
	cands, err := j.p.candidates(ctx, j, names)
	if err != nil {
		return nil, err
	}
	showInstalled := isTrue(c.Kwargs.Value("show_installed"))
	out := ordered.New()
	for _, n := range names {
		cand, installed := cands[n], cur[n]
		switch {
		case len(installed) == 0 || showInstalled:
			out.Set(n, cand)
		case cand != "" && !anyAtLeast(j.p, installed, cand):
			out.Set(n, cand)
		default:
			out.Set(n, "")
		}
	}
	if len(names) == 1 {
		return out.Value(names[0]), nil
	}
	return out, nil
}

func anyAtLeast(p provider, versions []string, v string) bool {
	for _, x := range versions {
		if p.cmp(x, v) >= 0 {
			return true
		}
	}
	return false
}

func (m *Module) refreshDB(ctx context.Context, c *modules.Call) (any, error) {
	j, err := m.newJob(c)
	if err != nil {
		return nil, err
	}
	return j.refresh(ctx)
}

// install is pkg.install with aptpkg's decision of targets, downgrades
// and reinstalls; yum and apk share it with their own command lines.
func (m *Module) install(ctx context.Context, c *modules.Call) (any, error) {
	j, err := m.newJob(c)
	if err != nil {
		return nil, err
	}
	ts, kind, err := parseTargets(ctx, j)
	if err != nil || len(ts) == 0 {
		return ordered.New(), err
	}
	l, err := j.lists(ctx)
	if err != nil {
		return nil, err
	}
	old := l.current()
	plan, reinstalled, errs := j.plan(ctx, ts, kind, old)
	cmds := j.p.installCmds(j, plan)
	if len(cmds) == 0 {
		if len(errs) > 0 {
			return nil, changesError("Problem encountered installing package(s)", errs, ordered.New())
		}
		return ordered.New(), nil
	}
	if isTrue(c.Arg("refresh")) && j.needsRefresh(ctx, ts) {
		if _, err := j.refresh(ctx); err != nil {
			return nil, err
		}
	}
	held, err := j.heldAmong(ctx, plan)
	if err != nil {
		return nil, err
	}
	for _, h := range held {
		if _, err := j.setSelection(ctx, h, "install"); err != nil {
			return nil, err
		}
	}
	errs = append(errs, j.runAll(ctx, cmds)...)
	for _, h := range held {
		if _, err := j.setSelection(ctx, h, "hold"); err != nil {
			return nil, err
		}
	}
	j.forget()
	nl, err := j.lists(ctx)
	if err != nil {
		return nil, err
	}
	ret := compareDicts(old, nl.current())
	for _, name := range reinstalled {
		if !ret.Has(name) || len(old[name]) > 0 {
			ret.Set(name, ordered.FromPairs("old", strings.Join(old[name], ","), "new", strings.Join(nl.current()[name], ",")))
		}
	}
	if len(errs) > 0 {
		return nil, changesError("Problem encountered installing package(s)", errs, ret)
	}
	return ret, nil
}

func (j *job) runAll(ctx context.Context, cmds []syscmd.Cmd) []string {
	var errs []string
	for _, cmd := range cmds {
		r, err := j.execLocked(ctx, cmd)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		if r.Retcode != 0 {
			if t := j.p.errText(r); t != "" {
				errs = append(errs, t)
			}
		}
	}
	return errs
}

// plan sorts the targets into installs, downgrades and reinstalls.
func (j *job) plan(ctx context.Context, ts []target, kind string, old map[string][]string) (*installPlan, []string, []string) {
	reinstall := isTrue(j.c.Arg("reinstall"))
	plan := &installPlan{fromrepo: j.c.Str("fromrepo"), file: kind == "file"}
	var reinstalled, errs []string
	for _, t := range ts {
		if kind == "file" {
			plan.targets = append(plan.targets, t.path)
			continue
		}
		if !t.hasVersion || t.version == "" {
			if reinstall && len(old[t.name]) > 0 {
				plan.reinstall = append(plan.reinstall, t.name)
				reinstalled = append(reinstalled, t.name)
			} else {
				plan.targets = append(plan.targets, t.name)
			}
			continue
		}
		ver := strings.TrimLeft(t.version, "=")
		if oper, v := versionSpec(ver); oper != "" {
			resolved, err := j.resolveSpec(ctx, t.name, oper, v)
			if err != nil {
				errs = append(errs, err.Error())
				continue
			}
			ver = resolved
		}
		pkgstr := j.p.target(t.name, ver)
		cver := strings.Join(old[t.name], ",")
		switch {
		case reinstall && cver != "" && j.p.cmp(ver, cver) == 0:
			plan.reinstall = append(plan.reinstall, pkgstr)
			reinstalled = append(reinstalled, t.name)
		case cver == "" || j.p.cmp(ver, cver) >= 0:
			plan.targets = append(plan.targets, pkgstr)
		default:
			plan.downgrade = append(plan.downgrade, pkgstr)
		}
	}
	return plan, reinstalled, errs
}

// resolveSpec turns a comparison such as ">=1.2" into the candidate
// version when it satisfies it, as aptpkg does with list_repo_pkgs.
func (j *job) resolveSpec(ctx context.Context, name, oper, v string) (string, error) {
	cands, err := j.p.candidates(ctx, j, []string{name})
	if err != nil {
		return "", err
	}
	cand := cands[name]
	if cand != "" && Compare(j.p.cmp, cand, oper, v) {
		return cand, nil
	}
	avail := "None"
	if cand != "" {
		avail = cand
	}
	//lint:ignore ST1005 Salt's exact message
	return "", fmt.Errorf("No version matching '%s%s%s' could be found (available: %s)", name, oper, v, avail)
}

// Compare is salt.utils.versions.compare: whether a oper b holds under
// cmp (oper one of ==, =, !=, <, <=, >, >=).
func Compare(cmp func(a, b string) int, a, oper, b string) bool {
	r := cmp(a, b)
	switch oper {
	case "==", "=", "":
		return r == 0
	case "!=":
		return r != 0
	case "<":
		return r < 0
	case "<=":
		return r <= 0
	case ">":
		return r > 0
	case ">=":
		return r >= 0
	}
	return false
}

// uninstall is remove and purge (aptpkg._uninstall).
func (m *Module) uninstall(action string) modules.Func {
	return func(ctx context.Context, c *modules.Call) (any, error) {
		j, err := m.newJob(c)
		if err != nil {
			return nil, err
		}
		ts, _, err := parseTargets(ctx, j)
		if err != nil {
			return nil, err
		}
		l, err := j.lists(ctx)
		if err != nil {
			return nil, err
		}
		old, oldRemoved := l.current(), l.removed
		var targets []string
		for _, t := range ts {
			if len(old[t.name]) > 0 {
				targets = append(targets, t.name)
			}
		}
		_, isApt := j.p.(apt)
		if action == "purge" && isApt {
			for _, t := range ts {
				if len(oldRemoved[t.name]) > 0 {
					targets = append(targets, t.name)
				}
			}
		}
		if len(targets) == 0 {
			return ordered.New(), nil
		}
		errs := j.runAll(ctx, []syscmd.Cmd{j.p.removeCmd(j, action, targets)})
		j.forget()
		nl, err := j.lists(ctx)
		if err != nil {
			return nil, err
		}
		var ret *ordered.Map
		changes := compareDicts(old, nl.current())
		if action == "purge" && isApt {
			ret = ordered.FromPairs("removed", compareDicts(oldRemoved, nl.removed), "installed", changes)
		} else {
			ret = changes
		}
		if len(errs) > 0 {
			return nil, changesError("Problem encountered removing package(s)", errs, ret)
		}
		return ret, nil
	}
}

func (m *Module) upgrade(ctx context.Context, c *modules.Call) (any, error) {
	j, err := m.newJob(c)
	if err != nil {
		return nil, err
	}
	if isTrue(c.Arg("refresh")) {
		if _, err := j.refresh(ctx); err != nil {
			return nil, err
		}
	}
	l, err := j.lists(ctx)
	if err != nil {
		return nil, err
	}
	old := l.current()
	cmd := j.p.upgradeCmd(j)
	r, err := j.execLocked(ctx, cmd)
	if err != nil {
		return nil, err
	}
	j.forget()
	nl, err := j.lists(ctx)
	if err != nil {
		return nil, err
	}
	ret := compareDicts(old, nl.current())
	if r.Retcode != 0 {
		return nil, changesError("Problem encountered upgrading packages", []string{j.p.errText(r)}, ret)
	}
	return ret, nil
}

// needsRefresh is aptpkg.install's refresh decision: a pinned version
// that is already the candidate needs no refresh; any unpinned target
// does. Other providers refresh whenever asked.
func (j *job) needsRefresh(ctx context.Context, ts []target) bool {
	if _, isApt := j.p.(apt); !isApt {
		return true
	}
	for _, t := range ts {
		if !t.hasVersion || t.version == "" {
			return true
		}
		cands, err := j.p.candidates(ctx, j, []string{t.name})
		if err != nil || cands[t.name] != t.version {
			return true
		}
	}
	return false
}

// execLocked is exec with aptpkg._call_apt's patience: while apt reports
// "Could not get lock" it retries up to ten times, waiting 2, 4, 8, …
// seconds.
func (j *job) execLocked(ctx context.Context, cmd syscmd.Cmd) (syscmd.Result, error) {
	r, err := j.exec(ctx, cmd)
	for n := 1; err == nil && n <= 10 && strings.Contains(r.Stderr, "Could not get lock"); n++ {
		j.log().Warn(fmt.Sprintf("Waiting for dpkg lock release: retrying... %d/100", n))
		t := time.NewTimer(time.Duration(1<<n) * time.Second)
		select {
		case <-ctx.Done():
			t.Stop()
			return r, modules.Errorf("wait for the dpkg lock: %w", ctx.Err())
		case <-t.C:
		}
		r, err = j.exec(ctx, cmd)
	}
	return r, err
}
