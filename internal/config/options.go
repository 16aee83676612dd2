package config

import (
	"fmt"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
)

// Kind is the type of an option's value in the config file.
type Kind int

// The kinds of option values.
const (
	// KindAny is a value its reader interprets itself.
	KindAny Kind = iota
	// KindString is a scalar read as text.
	KindString
	// KindInt is a whole number (a numeric string is accepted, as Salt's
	// type coercion in salt/config/__init__.py _validate_opts does).
	KindInt
	// KindBool is True or False.
	KindBool
	// KindDuration is a number of Option.Unit.
	KindDuration
	// KindMapping is a YAML mapping.
	KindMapping
	// KindRoots is a mapping of saltenv to a list of directories
	// (file_roots, pillar_roots).
	KindRoots
	// KindStrings is a string or a list of strings (the minion's master).
	KindStrings
)

// Option is one option of a daemon's config file: its key, its type,
// Salt's default and who reads it. An option with a Field is a typed
// option: the constructor sets the field to Default and the loader sets
// it from the file, so it is read by construction. An option without a
// Field is looked up by name in Raw by the package named in Reader (a
// directory of this module, e.g. "cmd/salt-ssh"); its default is the
// one that reader applies. A test scans the source for every by-name
// lookup of an option and fails when the table and the code disagree, so
// the "options Brine does not use" warning is true both ways.
type Option[T any] struct {
	Key  string
	Kind Kind
	// Unit is what one of a KindDuration's numbers means (time.Second
	// for ssh_timeout, time.Minute for cache_life).
	Unit time.Duration
	// Default is Salt's default in the file's own terms (60 for
	// ssh_timeout), or a func() any building a fresh one; nil leaves the
	// field's zero value.
	Default any
	// Reader is the package directory that uses the option.
	Reader string
	// Field returns a pointer to the typed field the option fills.
	Field func(*T) any
}

// setDefaults sets every typed field of t to its table default; a
// default the field cannot hold is a bug in the table.
func setDefaults[T any](t *T, table []Option[T]) {
	r := &reader{}
	for _, o := range table {
		if o.Field == nil || o.Default == nil {
			continue
		}
		d := o.Default
		if f, ok := d.(func() any); ok {
			d = f()
		}
		r.set(o.Key, o.Kind, o.Unit, o.Field(t), d)
	}
	if len(r.errs) > 0 {
		panic(fmt.Sprintf("config: option table defaults: %v", r.errs))
	}
}

// applyTable sets every typed field of t whose option raw gives a
// non-null value, collecting problems in r.
func applyTable[T any](t *T, table []Option[T], r *reader) {
	for _, o := range table {
		if o.Field == nil {
			continue
		}
		if v, ok := r.get(o.Key); ok {
			r.set(o.Key, o.Kind, o.Unit, o.Field(t), v)
		}
	}
}

// unknownKeys lists the keys of raw the table does not name, in file
// order.
func unknownKeys[T any](raw *ordered.Map, table []Option[T]) []string {
	known := map[string]bool{}
	for _, o := range table {
		known[o.Key] = true
	}
	var out []string
	for _, k := range raw.StringKeys() {
		if !known[k] && !isReturnerOption(k) {
			out = append(out, k)
		}
	}
	return out
}

// returnerNames are the returners whose settings sit in a daemon's
// config, read by the returner itself (salt/returners/__init__.py
// get_returner_options): <name>.<attr>, <name>: {…} and, for
// --return_config, <profile>.<name>.<attr> and <profile>.<name>: {…}.
var returnerNames = []string{"mysql", "returner.mysql", "pgjsonb", "returner.pgjsonb", "master_job_cache.postgres", "rawfile_json", "syslog"}

// isReturnerOption reports whether key is a returner's setting.
func isReturnerOption(key string) bool {
	for _, n := range returnerNames {
		if key == n || strings.HasPrefix(key, n+".") || strings.HasSuffix(key, "."+n) || strings.Contains(key, "."+n+".") {
			return true
		}
	}
	return false
}

// MasterOptions returns the master config's option table.
func MasterOptions() []Option[Master] { return masterOptions }

// MinionOptions returns the minion config's option table.
func MinionOptions() []Option[Minion] { return minionOptions }

// IsMinionOption reports whether key is an option of the minion config
// that Brine reads.
func IsMinionOption(key string) bool {
	for _, o := range minionOptions {
		if o.Key == key {
			return true
		}
	}
	return false
}

// raw is the table entry of an option looked up by name.
func raw[T any](key string, kind Kind, reader string) Option[T] {
	return Option[T]{Key: key, Kind: kind, Reader: reader}
}

// sharedOptions are read by name from the options the state layer runs
// with (opts in state and execution modules, outputters, pillar and
// grains): the minion's config under salt-minion and salt-call, the
// master's under salt-ssh, so both tables carry them.
func sharedOptions[T any]() []Option[T] {
	r := func(key string, kind Kind, reader string) Option[T] { return raw[T](key, kind, reader) }
	return []Option[T]{
		r("append_domain", KindString, "state/coregrains"),
		r("backup_mode", KindString, "state/modules/file"),
		r("cachedir", KindString, "state/modules/cp"),
		r("clean_dynamic_modules", KindBool, "state/modules/saltutil"),
		r("cmd_safe", KindBool, "state/modules/cmd"),
		r("conf_file", KindString, "state/coregrains"),
		r("config_dir", KindString, "state/coregrains"),
		r("enable_fqdns_grains", KindBool, "state/coregrains"),
		r("enable_gpu_grains", KindBool, "state/coregrains"),
		r("enable_lspci", KindBool, "state/coregrains"),
		r("exclude_ext_pillar", KindAny, "state/pillar"),
		r("ext_pillar", KindAny, "state/pillar"),
		r("extension_modules", KindString, "state/modules/saltutil/proc"),
		r("extmod_blacklist", KindMapping, "state/modules/saltutil"),
		r("extmod_whitelist", KindMapping, "state/modules/saltutil"),
		r("failhard", KindBool, "state/apply"),
		r("file_client", KindString, "state/modules/saltutil"),
		r("file_roots", KindRoots, "state/apply"),
		r("git_pillar_base", KindString, "state/pillar"),
		r("git_pillar_branch", KindString, "state/pillar"),
		r("git_pillar_env", KindString, "state/pillar"),
		r("git_pillar_fallback", KindString, "state/pillar"),
		r("git_pillar_includes", KindBool, "state/pillar"),
		r("git_pillar_root", KindString, "state/pillar"),
		r("grains_cache", KindBool, "state/coregrains"),
		r("grains_cache_expiration", KindInt, "state/coregrains"),
		r("grains", KindMapping, "state/coregrains"),
		r("hash_type", KindString, "state/modules/cp"),
		r("id", KindString, "state/apply"),
		r("master", KindAny, "state/coregrains"),
		r("mine_functions", KindMapping, "state/modules/mine"),
		r("minion_id", KindString, "state/modules/match"),
		r("no_parse", KindAny, "state/modules/publish"),
		r("nodegroups", KindMapping, "state/target"),
		r("pillar_merge_lists", KindBool, "state/pillar"),
		r("pillar_raise_on_missing", KindBool, "state/pillar/module"),
		r("pillar_roots", KindRoots, "state/apply"),
		r("pillar_source_merging_strategy", KindString, "state/pillar"),
		r("pillarenv", KindString, "state/apply"),
		r("pillarenv_from_saltenv", KindBool, "state/pillar/module"),
		r("renderer", KindString, "state/apply"),
		r("saltenv", KindString, "state/apply"),
		r("ssh_list_nodegroups", KindMapping, "state/target"),
		r("state_aggregate", KindAny, "state/run"),
		r("state_auto_order", KindBool, "state/apply"),
		r("state_output", KindString, "output"),
		r("state_output_exclude", KindAny, "output"),
		r("state_output_profile", KindBool, "output"),
		r("state_output_terse", KindAny, "output"),
		r("state_verbose", KindBool, "output"),
		r("systemd.scope", KindBool, "state/modules/service"),
		r("test", KindBool, "state/apply"),
		r("test.foo", KindAny, "state/modules/test"),
		r("user", KindString, "state/states/filestate"),
	}
}
