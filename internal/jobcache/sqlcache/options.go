package sqlcache

import (
	"github.com/brinesalt/brine/internal/jobcache"
	"github.com/brinesalt/brine/internal/ordered"
)

// settings are a returner's option names, the keys it reads them under
// and Salt's defaults.
type settings struct {
	names    []string
	attrs    []string
	defaults map[string]any
}

// returnerSettings: mysql reads mysql.* (salt/returners/mysql.py) and
// Brine also returner.mysql.*; pgjsonb reads returner.pgjsonb.*
// (salt/returners/pgjsonb.py) and Brine also pgjsonb.*, the form the
// other returners use. Both take alternative.<name>.* through
// --return_config.
var returnerSettings = map[string]settings{
	"mysql": {
		names:    []string{"mysql", "returner.mysql"},
		attrs:    []string{"host", "user", "pass", "db", "port", "ssl_ca", "ssl_cert", "ssl_key"},
		defaults: map[string]any{"host": "salt", "user": "salt", "pass": "salt", "db": "salt", "port": 3306},
	},
	"pgjsonb": {
		names:    []string{"returner.pgjsonb", "pgjsonb"},
		attrs:    []string{"host", "user", "pass", "db", "port", "sslmode", "sslcert", "sslkey", "sslrootcert", "sslcrl"},
		defaults: map[string]any{"host": "localhost", "user": "salt", "pass": "salt", "db": "salt", "port": 5432},
	},
	// postgres_local_cache reads master_job_cache.postgres.* (Salt's
	// module has no defaults and fails without them; these are its
	// documentation's example).
	"postgres_local_cache": {
		names:    []string{"master_job_cache.postgres"},
		attrs:    []string{"host", "user", "passwd", "db", "port"},
		defaults: map[string]any{"host": "salt", "user": "salt", "passwd": "salt", "db": "salt", "port": 5432},
	},
}

// Options are the connection options of returner name ("mysql",
// "pgjsonb", "postgres_local_cache") for a return (its ret_config and ret_kwargs; nil for the
// master's job cache), as get_returner_options finds them through get.
func Options(name string, get jobcache.Lookup, ret *ordered.Map) map[string]any {
	st := returnerSettings[name]
	if get == nil {
		get = func(string) any { return nil }
	}
	return jobcache.ReturnerOptions(get, st.names, ret, st.attrs, st.defaults)
}
