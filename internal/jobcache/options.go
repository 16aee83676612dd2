package jobcache

import (
	"fmt"

	"github.com/brinesalt/brine/internal/py"

	"github.com/brinesalt/brine/internal/ordered"
)

// Lookup reads one option by name as config.option does; nil when unset.
type Lookup func(key string) any

// ReturnerOptions is salt/returners/__init__.py get_returner_options:
// for each attribute, the value under ret_config.<name>.<attr> when the
// return names a ret_config (--return_config), else <name>: {attr: …}
// or the flat key <name>.<attr>, else the default; then ret_kwargs
// (--return_kwargs) override all. Like Salt, a falsy configured value
// counts as unset. names are tried in order for each attribute: the
// returner's Salt name first, then any alias Brine also reads.
func ReturnerOptions(get Lookup, names []string, ret *ordered.Map, attrs []string, defaults map[string]any) map[string]any {
	retConfig := ""
	if v, ok := ret.Get("ret_config"); ok && v != nil {
		retConfig = fmt.Sprint(v)
	}
	out := map[string]any{}
	for _, a := range attrs {
		for _, name := range names {
			if v := fetchOption(get, retConfig, name, a); py.Truthy(v) {
				out[a] = v
				break
			}
		}
		if _, ok := out[a]; !ok {
			if d, ok := defaults[a]; ok {
				out[a] = d
			}
		}
	}
	if kw, ok := ret.Value("ret_kwargs").(*ordered.Map); ok {
		kw.Range(func(k, v any) bool {
			out[ordered.KeyString(k)] = v
			return true
		})
	}
	return out
}

// fetchOption is get_returner_options' _fetch_option.
func fetchOption(get Lookup, retConfig, name, attr string) any {
	sub := func(key string) *ordered.Map { m, _ := get(key).(*ordered.Map); return m }
	if retConfig != "" {
		v, ok := sub(retConfig + "." + name).Get(attr)
		if !ok {
			v = get(retConfig + "." + name + "." + attr)
		}
		if py.Truthy(v) {
			return v
		}
	}
	if v, ok := sub(name).Get(attr); ok {
		return v
	}
	return get(name + "." + attr)
}

// FormatJobInstance is salt.utils.jid.format_job_instance: the summary
// jobs.list_jobs shows for a load. A nil load is the runner's "Error"
// entry (salt/runners/jobs.py _format_job_instance).
func FormatJobInstance(load *ordered.Map) *ordered.Map {
	return formatJob(load, 5)
}

// formatJob builds the summary in a map with room for size keys.
func formatJob(load *ordered.Map, size int) *ordered.Map {
	if load == nil || load.Len() == 0 {
		return ordered.FromPairs("Error", "Cannot contact returner or no job with this jid")
	}
	args, _ := load.Value("arg").([]any)
	if args == nil {
		args = []any{}
	}
	out := ordered.NewSize(size)
	out.Set("Function", orString(load.Value("fun"), "unknown-function"))
	out.Set("Arguments", args)
	out.Set("Target", orValue(load.Value("tgt"), "unknown-target"))
	out.Set("Target-type", orString(load.Value("tgt_type"), "list"))
	out.Set("User", orString(load.Value("user"), "root"))
	if md, ok := load.Get("metadata"); ok {
		out.Set("Metadata", md)
	} else if kw, ok := load.Value("kwargs").(*ordered.Map); ok {
		if md, ok := kw.Get("metadata"); ok {
			out.Set("Metadata", md)
		}
	}
	return out
}

// FormatJIDInstance is salt.utils.jid.format_jid_instance: the summary
// with StartTime, built at its final size (list_jobs makes one per job).
func FormatJIDInstance(jid string, load *ordered.Map) *ordered.Map {
	out := formatJob(load, 7)
	out.Set("StartTime", FormatJIDTime(jid))
	return out
}

// orValue is job.get(key, def) for a key whose value may be a list.
func orValue(v any, def string) any {
	if v == nil {
		return def
	}
	return v
}

func orString(v any, def string) any {
	if s, ok := v.(string); ok && s != "" {
		return s
	}
	return def
}
