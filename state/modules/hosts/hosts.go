// Package hosts is Salt's hosts execution module (salt/modules/hosts.py):
// reading and editing the hosts file named by the hosts.file option
// (default /etc/hosts; options, grains and pillar are consulted as
// config.option does).
//
// Edits are written atomically (a temporary file renamed over the
// original, keeping its mode) except where the file is a mount point, as
// /etc/hosts is in containers: rename cannot replace it there, so it is
// rewritten in place. Unlike Salt, parsed contents are not cached in
// __context__; every call reads the file afresh.
package hosts

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/modules/configmod"
)

// DefaultFile is the hosts.file default (salt/config DEFAULT_MINION_OPTS).
const DefaultFile = "/etc/hosts"

func req(name string) modules.Param { return modules.Param{Name: name} }

func reg(name, doc string, fn modules.Func, p ...modules.Param) {
	modules.Register(modules.Function{Name: "hosts." + name, Doc: doc, Spec: modules.Spec{Params: p}, Fn: fn})
}

func init() {
	reg("list_hosts", "Return the hosts file as {ip: {aliases: [...], comment}, comment-N: [lines]}.",
		func(_ context.Context, c *modules.Call) (any, error) { return listHosts(c) })
	reg("get_ip", "Return the first address whose aliases include host, or \"\".", getIP, req("host"))
	reg("get_alias", "Return the aliases of ip in file order, or [].", getAlias, req("ip"))
	reg("has_pair", "Report whether ip has the alias (or every alias of a list).", hasPairFn, req("ip"), req("alias"))
	reg("set_host", "Replace every entry of ip by one line with alias (and comment); an empty alias removes ip.",
		setHost, req("ip"), req("alias"), modules.Param{Name: "comment", Optional: true})
	reg("rm_host", "Remove alias from the entries of ip, dropping lines left without aliases.", rmHost, req("ip"), req("alias"))
	reg("add_host", "Add alias to the entry of ip, creating the entry if needed.", addHost, req("ip"), req("alias"))
	reg("set_comment", "Set the comment of an existing entry of ip; False when ip has no entry.", setComment,
		req("ip"), req("comment"))
}

// File returns the hosts file path of env: config.option("hosts.file"),
// which looks in the options, grains, pillar and master options before
// falling back to DefaultFile.
func File(env *modules.Env) string {
	if s, _ := configmod.Get(env, "hosts.file", ":", DefaultFile).(string); s != "" {
		return s
	}
	return DefaultFile
}

func listHosts(c *modules.Call) (*ordered.Map, error) {
	b, err := os.ReadFile(File(c.Env))
	if errors.Is(err, fs.ErrNotExist) {
		return ordered.New(), nil
	}
	if err != nil {
		return nil, modules.Errorf("read hosts file: %w", err)
	}
	return Parse(string(b)), nil
}

// Parse reads hosts file text as Salt's _list_hosts: comment lines are
// kept under "comment-N" keys, each address collects the aliases of all
// its lines, and a trailing comment is kept per address.
func Parse(text string) *ordered.Map {
	ret := ordered.New()
	count := 0
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "#") {
			ret.Set("comment-"+strconv.Itoa(count), []any{line})
			count++
			continue
		}
		comment := ""
		if i := strings.Index(line, "#"); i >= 0 {
			comment = strings.TrimLeft(line[i+1:], " \t")
			line = strings.TrimSpace(line[:i])
		}
		comps := strings.Fields(line)
		if len(comps) == 0 {
			continue
		}
		entry, _ := ret.Value(comps[0]).(*ordered.Map)
		if entry == nil {
			entry = ordered.New()
			ret.Set(comps[0], entry)
		}
		aliases, _ := entry.Value("aliases").([]any)
		if aliases == nil {
			aliases = []any{}
		}
		for _, a := range comps[1:] {
			aliases = append(aliases, a)
		}
		entry.Set("aliases", aliases)
		if comment != "" {
			entry.Set("comment", comment)
		}
	}
	return ret
}

func aliasesOf(hosts *ordered.Map, ip string) ([]any, bool) {
	e, ok := hosts.Value(ip).(*ordered.Map)
	if !ok {
		return nil, false
	}
	a, ok := e.Value("aliases").([]any)
	return a, ok
}

func getIP(_ context.Context, c *modules.Call) (any, error) {
	hosts, err := listHosts(c)
	if err != nil {
		return nil, err
	}
	host := c.Str("host")
	for _, k := range hosts.Keys() {
		a, _ := aliasesOf(hosts, ordered.KeyString(k))
		for _, x := range a {
			if x == host {
				return k, nil
			}
		}
	}
	return "", nil
}

func getAlias(_ context.Context, c *modules.Call) (any, error) {
	hosts, err := listHosts(c)
	if err != nil {
		return nil, err
	}
	if a, ok := aliasesOf(hosts, c.Str("ip")); ok {
		return a, nil
	}
	return []any{}, nil
}

func hasPair(hosts *ordered.Map, ip string, alias any) bool {
	a, ok := aliasesOf(hosts, ip)
	if !ok {
		return false
	}
	have := map[string]bool{}
	for _, x := range a {
		have[ordered.KeyString(x)] = true
	}
	if list, ok := alias.([]any); ok {
		for _, x := range list {
			if !have[ordered.KeyString(x)] {
				return false
			}
		}
		return true
	}
	return have[ordered.KeyString(alias)]
}

func hasPairFn(_ context.Context, c *modules.Call) (any, error) {
	hosts, err := listHosts(c)
	if err != nil {
		return nil, err
	}
	return hasPair(hosts, c.Str("ip"), c.Arg("alias")), nil
}
