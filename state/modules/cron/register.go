package cron

import (
	"context"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
)

func req(name string) modules.Param { return modules.Param{Name: name} }

func opt(name string, def any) modules.Param {
	return modules.Param{Name: name, Default: def, Optional: true}
}

func init() { register(modules.Default, live) }

// register adds the cron functions bound to ct to r; tests pass a fresh
// registry and a crontab with a fake runner.
func register(r *modules.Registry, ct *crontab) {
	r.SetVirtual("cron", func(*modules.Env) (bool, string) {
		if ct.available() {
			return true, ""
		}
		return false, "Cannot load cron module: crontab command not found"
	})
	reg := func(name, doc string, fn modules.Func, p ...modules.Param) {
		r.Register(modules.Function{Name: "cron." + name, Doc: doc, Spec: modules.Spec{Params: p}, Fn: fn})
	}
	list := func(ctx context.Context, c *modules.Call) (any, error) {
		t, err := ct.List(ctx, c.Str("user"))
		if err != nil {
			return nil, err
		}
		return t.Value(), nil
	}
	reg("list_tab", "Return the user's crontab as {pre, crons, special, env}; only lines below Salt's tag are parsed into entries.", list, req("user"))
	reg("ls", "Alias of cron.list_tab.", list, req("user"))
	reg("raw_cron", "Return the text of the user's crontab.", func(ctx context.Context, c *modules.Call) (any, error) {
		return ct.Raw(ctx, c.Str("user"))
	}, req("user"))
	reg("get_entry", "Return the job or special job with identifier (or else with cmd), or False.",
		func(ctx context.Context, c *modules.Call) (any, error) { return ct.getEntry(ctx, c) },
		req("user"), opt("identifier", nil), opt("cmd", nil))
	reg("set_job", "Add or update a job; returns new, updated, present or crontab's error. Times accept random and a:b ranges.",
		func(ctx context.Context, c *modules.Call) (any, error) {
			times := map[string]any{}
			for _, f := range timeFields {
				times[f] = strings.ToLower(ordered.KeyString(c.Arg(f)))
			}
			return ct.set(ctx, c.Str("user"), jobSpec{times: times, cmd: c.Str("cmd"), commented: c.Arg("commented"),
				comment: c.Arg("comment"), identifier: c.Arg("identifier")})
		}, req("user"), req("minute"), req("hour"), req("daymonth"), req("month"), req("dayweek"), req("cmd"),
		opt("commented", false), opt("comment", nil), opt("identifier", nil))
	rmJob := func(ctx context.Context, c *modules.Call) (any, error) {
		times := map[string]any{}
		for _, f := range timeFields {
			times[f] = c.Arg(f)
		}
		return ct.rmJob(ctx, c.Str("user"), c.Str("cmd"), times, c.Arg("identifier"))
	}
	rmParams := []modules.Param{req("user"), req("cmd"), opt("minute", nil), opt("hour", nil), opt("daymonth", nil),
		opt("month", nil), opt("dayweek", nil), opt("identifier", nil)}
	reg("rm_job", "Remove the user's job running cmd (or with identifier), only where the given times match; returns removed or absent.", rmJob, rmParams...)
	reg("rm", "Alias of cron.rm_job.", rmJob, rmParams...)
	reg("set_special", "Add or update an @special job (@reboot, @daily, …); returns new, updated, present or crontab's error.",
		func(ctx context.Context, c *modules.Call) (any, error) {
			return ct.set(ctx, c.Str("user"), jobSpec{special: c.Arg("special"), cmd: c.Str("cmd"), commented: c.Arg("commented"),
				comment: c.Arg("comment"), identifier: c.Arg("identifier")})
		}, req("user"), req("special"), req("cmd"), opt("commented", false), opt("comment", nil), opt("identifier", nil))
	reg("rm_special", "Remove an @special job running cmd (or with identifier); returns removed or absent.",
		func(ctx context.Context, c *modules.Call) (any, error) {
			return ct.rmSpecial(ctx, c.Str("user"), c.Str("cmd"), c.Arg("special"), c.Arg("identifier"))
		}, req("user"), req("cmd"), opt("special", nil), opt("identifier", nil))
	reg("set_env", "Set an environment variable in the managed part of the crontab; returns new, updated or present.",
		func(ctx context.Context, c *modules.Call) (any, error) {
			return ct.setEnv(ctx, c.Str("user"), c.Str("name"), c.Arg("value"))
		}, req("user"), req("name"), opt("value", nil))
	reg("rm_env", "Remove an environment variable from the crontab; returns removed or absent.",
		func(ctx context.Context, c *modules.Call) (any, error) {
			return ct.rmEnv(ctx, c.Str("user"), c.Str("name"))
		},
		req("user"), req("name"))
	reg("write_cron_file", "Install the file at path as the user's crontab; True on success.",
		func(ctx context.Context, c *modules.Call) (any, error) {
			res, err := ct.WriteFile(ctx, c.Str("user"), c.Str("path"))
			return err == nil && res.Retcode == 0, err
		}, req("user"), req("path"))
	reg("write_cron_file_verbose", "Install the file at path as the user's crontab; returns {pid, retcode, stdout, stderr}.",
		func(ctx context.Context, c *modules.Call) (any, error) {
			res, err := ct.WriteFile(ctx, c.Str("user"), c.Str("path"))
			if err != nil {
				return nil, err
			}
			return res.Value(), nil
		}, req("user"), req("path"))
}

func (ct *crontab) getEntry(ctx context.Context, c *modules.Call) (any, error) {
	identifier, cmd := c.Arg("identifier"), c.Arg("cmd")
	if modules.Truthy(identifier) && modules.Truthy(cmd) {
		c.Env.Log.Warn("Both identifier and cmd are specified. Only using identifier.")
		cmd = nil
	}
	t, err := ct.List(ctx, c.Str("user"))
	if err != nil {
		return nil, err
	}
	for _, e := range append(append([]*ordered.Map{}, t.Crons...), t.Special...) {
		if modules.Truthy(identifier) && e.Value("identifier") == identifier {
			return e, nil
		}
		if modules.Truthy(cmd) && e.Value("cmd") == cmd {
			return e, nil
		}
	}
	return false, nil
}
