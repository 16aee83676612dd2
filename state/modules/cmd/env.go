package cmd

import (
	"fmt"
	"os"
	"os/user"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
)

// umaskMu serialises umask changes around process starts.
var umaskMu sync.Mutex

// runasUser is the identity a command runs as.
type runasUser struct {
	name, home, shell string
	cred              *syscall.Credential // nil: the minion's own identity
}

// lookupRunas resolves runas and group. Salt runs the command through
// `su` to get the user's login environment; Brine switches credentials
// directly and sets the login variables itself.
func lookupRunas(runas, group string) (*runasUser, error) {
	if runas == "" && group == "" {
		u := &runasUser{}
		if cur, err := user.Current(); err == nil {
			u.name, u.home = cur.Username, cur.HomeDir
		}
		if h, err := os.UserHomeDir(); err == nil {
			u.home = h
		}
		return u, nil
	}
	r := &runasUser{}
	uid, gid := uint32(os.Getuid()), uint32(os.Getgid())
	if runas != "" {
		u, err := user.Lookup(runas)
		if err != nil {
			return nil, &modules.ExecutionError{Msg: fmt.Sprintf("User '%s' is not available", runas)}
		}
		r.name, r.home = u.Username, u.HomeDir
		r.shell = loginShell(runas)
		n, _ := strconv.ParseUint(u.Uid, 10, 32)
		g, _ := strconv.ParseUint(u.Gid, 10, 32)
		uid, gid = uint32(n), uint32(g)
	}
	if group != "" {
		g, err := user.LookupGroup(group)
		if err != nil {
			return nil, &modules.ExecutionError{Msg: fmt.Sprintf("Group '%s' is not available", runas)}
		}
		n, _ := strconv.ParseUint(g.Gid, 10, 32)
		gid = uint32(n)
	}
	r.cred = &syscall.Credential{Uid: uid, Gid: gid, Groups: supplementary(r.name)}
	if uid == uint32(os.Getuid()) && gid == uint32(os.Getgid()) {
		r.cred = nil
	}
	return r, nil
}

func supplementary(name string) []uint32 {
	if name == "" {
		return []uint32{}
	}
	u, err := user.Lookup(name)
	if err != nil {
		return []uint32{}
	}
	ids, _ := u.GroupIds()
	out := []uint32{}
	for _, id := range ids {
		if n, err := strconv.ParseUint(id, 10, 32); err == nil {
			out = append(out, uint32(n))
		}
	}
	return out
}

func loginShell(name string) string {
	b, err := os.ReadFile("/etc/passwd")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Split(line, ":")
		if len(f) == 7 && f[0] == name {
			return f[6]
		}
	}
	return ""
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
	if v, ok := c.Args["reset_system_locale"]; !ok || modules.Truthy(v) {
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
		run.set("PATH", ordered.KeyString(pp)+":"+run.vals["PATH"])
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
