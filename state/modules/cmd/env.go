package cmd

import (
	"os"
	"sort"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
)

// runasUser is the identity a command runs as.
type runasUser struct {
	name, home, shell string
	cred              procCred // nil: the minion's own identity
}

// localeVars are set to C unless given, as cmdmod's reset_system_locale.
var localeVars = []string{"LC_CTYPE", "LC_NUMERIC", "LC_TIME", "LC_COLLATE", "LC_MONETARY",
	"LC_MESSAGES", "LC_PAPER", "LC_NAME", "LC_ADDRESS", "LC_TELEPHONE", "LC_MEASUREMENT",
	"LC_IDENTIFICATION", "LANGUAGE"}

// buildEnv builds the child's environment as cmdmod's _run: the env
// argument (dict, or list of single-key dicts), C locale defaults, the
// minion's own environment unless clean_env, prepend_path, and no
// NOTIFY_SOCKET unless given.
func buildEnv(c *modules.Call, u *runasUser) ([]string, error) {
	given := parseEnv(c.Arg("env"))
	if u.cred != nil {
		given.setDefault("USER", u.name)
		given.setDefault("LOGNAME", u.name)
		given.setDefault("HOME", u.home)
		if u.shell != "" {
			given.setDefault("SHELL", u.shell)
		}
	}
	if v, ok := c.Args["reset_system_locale"]; resetLocale && (!ok || modules.Truthy(v)) {
		for _, k := range localeVars {
			given.setDefault(k, "C")
		}
	}
	run := &envMap{vals: map[string]string{}}
	if !c.Bool("clean_env") {
		for _, kv := range os.Environ() {
			if k, v, ok := strings.Cut(kv, "="); ok {
				run.set(k, v)
			}
		}
	}
	for _, k := range given.keys {
		run.set(k, given.vals[k])
	}
	if pp := c.Arg("prepend_path"); pp != nil && modules.Truthy(pp) {
		run.set("PATH", ordered.KeyString(pp)+string(os.PathListSeparator)+run.vals["PATH"])
	}
	if _, ok := given.vals["NOTIFY_SOCKET"]; !ok {
		run.del("NOTIFY_SOCKET")
	}
	return run.list(), nil
}

type envMap struct {
	keys []string
	vals map[string]string
}

func (e *envMap) set(k, v string) {
	if _, ok := e.vals[k]; !ok {
		e.keys = append(e.keys, k)
	}
	e.vals[k] = v
}

func (e *envMap) setDefault(k, v string) {
	if _, ok := e.vals[k]; !ok {
		e.set(k, v)
	}
}

func (e *envMap) del(k string) {
	if _, ok := e.vals[k]; !ok {
		return
	}
	delete(e.vals, k)
	for i, x := range e.keys {
		if x == k {
			e.keys = append(e.keys[:i], e.keys[i+1:]...)
			break
		}
	}
}

func (e *envMap) list() []string {
	keys := append([]string(nil), e.keys...)
	sort.Strings(keys)
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, k+"="+e.vals[k])
	}
	return out
}

// parseEnv is cmdmod's _parse_env plus _ensure_env_str: None values
// become "", non-strings their str().
func parseEnv(v any) *envMap {
	e := &envMap{vals: map[string]string{}}
	add := func(k, val any) {
		s := ""
		if val != nil {
			s = ordered.KeyString(val)
		}
		e.set(ordered.KeyString(k), s)
	}
	switch x := v.(type) {
	case *ordered.Map:
		x.Range(func(k, val any) bool { add(k, val); return true })
	case []any:
		for _, item := range x {
			m, ok := item.(*ordered.Map)
			if !ok {
				continue
			}
			if m.Len() != 1 {
				return &envMap{vals: map[string]string{}}
			}
			m.Range(func(k, val any) bool { add(k, val); return true })
		}
	}
	return e
}
