package test

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/version"
	"github.com/brinesalt/brine/state/modules"
)

func registerIntrospection() {
	reg("version", "Return the Salt version this minion reports (the release Brine emulates).", params(),
		func(context.Context, *modules.Call) (any, error) { return version.Salt, nil })
	reg("versions_information", "Return the versions of Salt, Brine and the system as a dict.", params(),
		func(context.Context, *modules.Call) (any, error) { return versionsInformation(), nil })
	reg("versions_report", "Return the versions of Salt, Brine and the system as report text.", params(),
		func(context.Context, *modules.Call) (any, error) { return versionsReport(), nil })
	reg("versions", "Alias of test.versions_report.", params(),
		func(context.Context, *modules.Call) (any, error) { return versionsReport(), nil })
	reg("get_opts", "Return the configuration options this minion runs with.", params(),
		func(_ context.Context, c *modules.Call) (any, error) { return c.Env.Opts, nil })
	reg("opts_pkg", "Return the minion options with the grains under 'grains', for master-side compiling.", params(),
		func(_ context.Context, c *modules.Call) (any, error) {
			m := c.Env.Opts.Copy()
			m.Set("grains", c.Env.Grains())
			return m, nil
		})
	reg("conf_test", "Return the test.foo configuration option, or its default.", params(), confTest)
	reg("provider", "Return the name of the implementation that provides module.", params(req("module")),
		func(_ context.Context, c *modules.Call) (any, error) { return provider(c.Env, c.Str("module")), nil })
	reg("providers", "Return a dict of provider names to the module names they provide.", params(), providers)
	reg("not_loaded", "List the modules that the loader could not load.", params(),
		func(context.Context, *modules.Call) (any, error) { return []any{}, nil })
	reg("module_report", "Report the loaded execution modules and how each is reachable.", params(), moduleReport)
	reg("attr_call", "Call grains.items through the loader and return its result.", params(),
		func(ctx context.Context, c *modules.Call) (any, error) {
			return c.Env.Run(ctx, "grains.items", nil, nil)
		})
	reg("stack", "Return the current stack trace.", params(),
		func(context.Context, *modules.Call) (any, error) { return string(debug.Stack()), nil })
}

func confTest(_ context.Context, c *modules.Call) (any, error) {
	if v, ok := c.Env.Opts.Get("test.foo"); ok {
		return v, nil
	}
	if v, ok := c.Env.Grains().Get("test.foo"); ok {
		return v, nil
	}
	if v, ok := c.Env.Pillar.Get("test.foo"); ok {
		return v, nil
	}
	return "", nil
}

// saltFiles names the Salt source file behind a module whose file name
// differs from the module name, for test.provider.
var saltFiles = map[string]string{
	"cmd": "cmdmod", "sys": "sysmod", "pkg": "aptpkg", "service": "systemd_service",
	"user": "useradd", "group": "groupadd", "shadow": "shadow", "state": "state",
	"network": "linux_network", "ip": "debian_ip", "lowpkg": "dpkg_lowpkg", "sysctl": "linux_sysctl",
	"acl": "linux_acl", "mount": "mount", "disk": "disk",
}

func provider(env *modules.Env, module string) string {
	found := false
	for _, n := range env.Registry.Names(env) {
		if strings.HasPrefix(n, module+".") {
			found = true
			break
		}
	}
	if !found {
		return ""
	}
	if f, ok := saltFiles[module]; ok {
		return f
	}
	return module
}

func providers(_ context.Context, c *modules.Call) (any, error) {
	seen := map[string]bool{}
	out := ordered.New()
	for _, n := range c.Env.Registry.Names(c.Env) {
		mod, _, _ := strings.Cut(n, ".")
		if seen[mod] {
			continue
		}
		seen[mod] = true
		out.Set(provider(c.Env, mod), mod)
	}
	return out, nil
}

// moduleReport reproduces what test.module_report computes over Salt's
// loader, whose iteration yields only "mod.fun" keys.
func moduleReport(_ context.Context, c *modules.Call) (any, error) {
	funcs := toAny(c.Env.Registry.Names(c.Env))
	return ordered.FromPairs(
		"functions", funcs,
		"function_attrs", []any{},
		"function_subs", []any{},
		"modules", []any{},
		"module_attrs", []any{},
		"missing_attrs", append([]any{}, funcs...),
		"missing_subs", append([]any{}, funcs...),
	), nil
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, x := range s {
		out[i] = x
	}
	return out
}

func versionsInformation() *ordered.Map {
	sys := ordered.New()
	systemVersions(sys)
	return ordered.FromPairs(
		"Salt Version", ordered.FromPairs("Salt", version.Salt),
		"Brine Version", ordered.FromPairs("Brine", version.Brine, "Go", runtime.Version()),
		"System Versions", sys,
	)
}

// versionsReport formats versionsInformation as salt.version's
// versions_report: right-aligned names, one section per heading.
func versionsReport() string {
	info := versionsInformation()
	pad := len("Not Installed")
	info.Range(func(_, v any) bool {
		for _, k := range v.(*ordered.Map).StringKeys() {
			pad = max(pad, len(k))
		}
		return true
	})
	pad++
	var lines []string
	info.Range(func(sec, v any) bool {
		lines = append(lines, fmt.Sprintf("%s:", sec))
		m := v.(*ordered.Map)
		keys := m.StringKeys()
		sort.Slice(keys, func(i, j int) bool { return strings.ToLower(keys[i]) < strings.ToLower(keys[j]) })
		for _, k := range keys {
			val := ordered.KeyString(m.Value(k))
			if val == "" {
				val = "Not Installed"
			}
			lines = append(lines, fmt.Sprintf("%*s: %s", pad, k, val))
		}
		lines = append(lines, " ")
		return true
	})
	return strings.Join(lines, "\n")
}
