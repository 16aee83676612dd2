package main

import (
	"fmt"
	"strings"
)

// allowEntry is one justified skip.
type allowEntry struct {
	key  testKey
	why  string
	used bool
}

// allowList is the checked-in list of skips that are justified.
type allowList []*allowEntry

// parseAllowList reads lines of `IMPORT/PATH TestName[/sub] justification`;
// blank lines and lines starting with # are ignored. Every entry needs a
// justification.
func parseAllowList(name, text string) (allowList, error) {
	var out allowList
	seen := map[testKey]bool{}
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 3 {
			return nil, fmt.Errorf("%s:%d: want `IMPORT/PATH TestName justification`, got %q", name, i+1, line)
		}
		k := testKey{f[0], f[1]}
		if seen[k] {
			return nil, fmt.Errorf("%s:%d: %s listed twice", name, i+1, k)
		}
		seen[k] = true
		out = append(out, &allowEntry{key: k, why: strings.Join(f[2:], " ")})
	}
	return out, nil
}

// justifies returns the justification for skipping k, if listed.
func (a allowList) justifies(k testKey) (string, bool) {
	for _, e := range a {
		if e.key == k {
			e.used = true
			return e.why, true
		}
	}
	return "", false
}

// unused lists the entries no skip used.
func (a allowList) unused() []string {
	var out []string
	for _, e := range a {
		if !e.used {
			out = append(out, e.key.String())
		}
	}
	return out
}
