// Package configmod is Salt's config execution module
// (salt/modules/config.py): configuration lookups across the minion
// options, grains, pillar and the master options published in pillar
// (pillar["master"], with pillar_opts), then Salt's built-in DEFAULTS.
//
// Differences from Salt: sdb:// values are returned as they are (no sdb
// drivers), merge ignores the master's pillar_merge_lists, and
// gather_bootstrap_script is absent.
//
// The folder is configmod, not config, so that it does not share its
// name with internal/config, the daemons' configuration files.
package configmod

import (
	"context"
	"net/url"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/modules/file"
	"github.com/brinesalt/brine/state/modules/grains"
)

func req(name string) modules.Param { return modules.Param{Name: name} }

func opt(name string, def any) modules.Param {
	return modules.Param{Name: name, Default: def, Optional: true}
}

func reg(name, doc string, fn modules.Func, p ...modules.Param) {
	modules.Register(modules.Function{Name: "config." + name, Doc: doc, Spec: modules.Spec{Params: p}, Fn: fn})
}

// Defaults returns a fresh copy of Salt's config.DEFAULTS for Linux.
func Defaults() *ordered.Map {
	return ordered.FromPairs(
		"mongo.db", "salt", "mongo.password", "", "mongo.port", 27017, "mongo.user", "",
		"redis.db", "0", "redis.host", "salt", "redis.port", 6379,
		"test.foo", "unconfigured",
		"ca.cert_base_path", "/etc/pki",
		"solr.cores", []any{}, "solr.host", "localhost", "solr.port", "8983", "solr.baseurl", "/solr",
		"solr.type", "master", "solr.request_timeout", nil, "solr.init_script", "/etc/rc.d/solr",
		"solr.dih.import_options", ordered.FromPairs("clean", false, "optimize", true, "commit", true, "verbose", false),
		"solr.backup_path", nil, "solr.num_backups", 1,
		"poudriere.config", "/usr/local/etc/poudriere.conf", "poudriere.config_dir", "/usr/local/etc/poudriere.d",
		"ldap.uri", "", "ldap.server", "localhost", "ldap.port", "389", "ldap.tls", false, "ldap.no_verify", false,
		"ldap.anonymous", true, "ldap.scope", 2, "ldap.attrs", nil, "ldap.binddn", "", "ldap.bindpw", "",
		"hosts.file", "/etc/hosts",
		"aliases.file", "/etc/aliases",
		"virt", ordered.FromPairs("tunnel", false, "images", "/srv/salt-images"),
		"docker.exec_driver", "docker-exec",
		"docker.compare_container_networks", ordered.FromPairs(
			"static", []any{"Aliases", "Links", "IPAMConfig"},
			"automatic", []any{"IPAddress", "Gateway", "GlobalIPv6Address", "IPv6Gateway"}),
	)
}

// validProtos is salt.utils.files.VALID_PROTOS.
var validProtos = []string{"salt", "file", "http", "https", "ftp", "swift", "s3"}

func init() {
	reg("get", "Return key (nested with delimiter) from the minion options, grains, pillar, master options or defaults, first match wins; merge=recurse|overwrite merges them first.",
		get, req("key"), opt("default", ""), opt("delimiter", ":"), opt("merge", nil), opt("omit_opts", false),
		opt("omit_pillar", false), opt("omit_master", false), opt("omit_grains", false))
	reg("option", "Return the top-level setting value from options, grains, pillar, master options or defaults; wildcard=True returns {key: value} of matching keys.",
		option, req("value"), opt("default", nil), opt("omit_opts", false), opt("omit_grains", false),
		opt("omit_pillar", false), opt("omit_master", false), opt("omit_all", false), opt("wildcard", false))
	reg("merge", "Return value merged across the options, master options and pillar (dicts updated, lists joined); a string ends the search.",
		merge, req("value"), opt("default", ""), opt("omit_opts", false), opt("omit_master", false), opt("omit_pillar", false))
	reg("dot_vals", "Return the options and master options whose names start with value plus a dot.", dotVals, req("value"))
	reg("items", "Return the minion's configuration options.", func(_ context.Context, c *modules.Call) (any, error) {
		return c.Env.Opts, nil
	})
	reg("valid_fileproto", "Report whether uri's scheme is one Salt fetches from (salt, file, http, https, ftp, swift, s3).",
		func(_ context.Context, c *modules.Call) (any, error) { return ValidFileProto(c.Str("uri")), nil }, req("uri"))
	reg("backup_mode", "Return backup when set, else the backup_mode option.", func(ctx context.Context, c *modules.Call) (any, error) {
		if modules.Truthy(c.Arg("backup")) {
			return c.Arg("backup"), nil
		}
		return lookupOption(c.Env, "backup_mode", "", false), nil
	}, opt("backup", ""))
	reg("manage_mode", "Return mode normalised to a four-digit string (644, \"0o644\" → \"0644\"); None stays None.",
		func(_ context.Context, c *modules.Call) (any, error) {
			m, ok := file.NormalizeMode(c.Arg("mode"))
			if !ok {
				return nil, nil
			}
			return m, nil
		}, req("mode"))
}

// ValidFileProto is config.valid_fileproto: urllib's scheme of uri is
// one of Salt's VALID_PROTOS.
func ValidFileProto(uri string) bool {
	scheme := ""
	if u, err := url.Parse(uri); err == nil {
		scheme = strings.ToLower(u.Scheme)
	}
	for _, p := range validProtos {
		if scheme == p {
			return true
		}
	}
	return false
}

func master(env *modules.Env) *ordered.Map {
	if m, ok := env.Pillar.Value("master").(*ordered.Map); ok {
		return m
	}
	return ordered.New()
}

// Get is config.get without merging: the first of options, grains,
// pillar and master options holding key, else the defaults, else def.
func Get(env *modules.Env, key, delimiter string, def any) any {
	for _, data := range []*ordered.Map{env.Opts, env.Grains(), env.Pillar, master(env), Defaults()} {
		if v, ok := grains.Traverse(data, key, delimiter); ok {
			return v
		}
	}
	return def
}

func get(_ context.Context, c *modules.Call) (any, error) {
	key, delim := c.Str("key"), c.Str("delimiter")
	if c.Arg("merge") == nil {
		for _, src := range []struct {
			omit string
			data *ordered.Map
		}{{"omit_opts", c.Env.Opts}, {"omit_grains", c.Env.Grains()}, {"omit_pillar", c.Env.Pillar}, {"omit_master", master(c.Env)}, {"", Defaults()}} {
			if src.omit != "" && c.Bool(src.omit) {
				continue
			}
			if v, ok := grains.Traverse(src.data, key, delim); ok {
				return v, nil
			}
		}
		return c.Arg("default"), nil
	}
	strategy := c.Str("merge")
	if strategy != "recurse" && strategy != "overwrite" {
		c.Env.Log.Warn("Unsupported merge strategy '" + strategy + "'. Falling back to 'recurse'.")
		strategy = "recurse"
	}
	data := Defaults()
	for _, src := range []*ordered.Map{master(c.Env), c.Env.Pillar, c.Env.Grains(), c.Env.Opts} {
		if src == nil {
			continue
		}
		src, _ = ordered.DeepCopy(src).(*ordered.Map)
		if strategy == "overwrite" {
			src.Range(func(k, v any) bool { data.Set(k, v); return true })
			continue
		}
		grains.Merge(data, src)
	}
	if v, ok := grains.Traverse(data, key, delim); ok {
		return v, nil
	}
	return c.Arg("default"), nil
}

func lookupOption(env *modules.Env, value string, def any, omitAll bool) any {
	if !omitAll {
		for _, data := range []*ordered.Map{env.Opts, env.Grains(), env.Pillar, master(env)} {
			if v, ok := data.Get(value); ok {
				return v
			}
		}
	}
	if v, ok := Defaults().Get(value); ok {
		return v
	}
	return def
}

func option(_ context.Context, c *modules.Call) (any, error) {
	value := c.Str("value")
	omit := func(name string) bool { return c.Bool("omit_all") || c.Bool(name) }
	wildcard := c.Bool("wildcard")
	def := c.Arg("default")
	if def == nil {
		def = ""
		if wildcard {
			def = ordered.New()
		}
	}
	if !wildcard {
		for _, src := range []struct {
			omit string
			data *ordered.Map
		}{{"omit_opts", c.Env.Opts}, {"omit_grains", c.Env.Grains()}, {"omit_pillar", c.Env.Pillar}, {"omit_master", master(c.Env)}} {
			if omit(src.omit) {
				continue
			}
			if v, ok := src.data.Get(value); ok {
				return v, nil
			}
		}
		if v, ok := Defaults().Get(value); ok {
			return v, nil
		}
		return def, nil
	}
	ret := ordered.New()
	for _, src := range []struct {
		omit string
		data *ordered.Map
	}{{"omit_master", master(c.Env)}, {"omit_pillar", c.Env.Pillar}, {"omit_grains", c.Env.Grains()}, {"omit_opts", c.Env.Opts}} {
		if omit(src.omit) {
			continue
		}
		src.data.Range(func(k, v any) bool {
			if grains.Fnmatch(value, ordered.KeyString(k)) {
				ret.Set(k, v)
			}
			return true
		})
	}
	Defaults().Range(func(k, v any) bool {
		if grains.Fnmatch(value, ordered.KeyString(k)) && !ret.Has(k) {
			ret.Set(k, v)
		}
		return true
	})
	if ret.Len() == 0 {
		return def, nil
	}
	return ret, nil
}

func merge(_ context.Context, c *modules.Call) (any, error) {
	value := c.Str("value")
	var ret any
	found := false
	for _, src := range []struct {
		omit string
		data *ordered.Map
	}{{"omit_opts", c.Env.Opts}, {"omit_master", master(c.Env)}, {"omit_pillar", c.Env.Pillar}} {
		if c.Bool(src.omit) {
			continue
		}
		tmp, ok := src.data.Get(value)
		if !ok {
			continue
		}
		if !found {
			ret, found = ordered.DeepCopy(tmp), true
			if _, ok := ret.(string); ok {
				return ret, nil
			}
			continue
		}
		ret = combine(ret, ordered.DeepCopy(tmp))
	}
	if !found {
		if v, ok := Defaults().Get(value); ok {
			return v, nil
		}
		return c.Arg("default"), nil
	}
	return ret, nil
}

// combine merges a later match under an earlier one as config.merge
// does: dicts by tmp.update(ret) (earlier keys win, later key order),
// lists concatenated, anything else keeps the earlier value.
func combine(ret, tmp any) any {
	switch r := ret.(type) {
	case *ordered.Map:
		if t, ok := tmp.(*ordered.Map); ok {
			r.Range(func(k, v any) bool { t.Set(k, v); return true })
			return t
		}
	case []any:
		if t, ok := tmp.([]any); ok {
			return append(append([]any{}, r...), t...)
		}
	}
	return ret
}

func dotVals(_ context.Context, c *modules.Call) (any, error) {
	prefix := c.Str("value") + "."
	ret := ordered.New()
	for _, data := range []*ordered.Map{master(c.Env), c.Env.Opts} {
		data.Range(func(k, v any) bool {
			if strings.HasPrefix(ordered.KeyString(k), prefix) {
				ret.Set(k, v)
			}
			return true
		})
	}
	return ret, nil
}

// Option is config.option for one key without omissions: the first of
// the minion options, grains, pillar and master options holding value
// as a flat key, else Salt's defaults, else def. Returners read their
// settings through it (salt/returners/__init__.py get_returner_options).
func Option(env *modules.Env, value string, def any) any {
	return lookupOption(env, value, def, false)
}
