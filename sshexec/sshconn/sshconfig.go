package sshconn

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/brinesalt/brine/internal/sshpattern"
	"github.com/kevinburke/ssh_config"
)

// SSHConfig is a parsed OpenSSH client config (~/.ssh/config, salt-ssh's
// ssh_config_file) with its Include files, answering what `ssh -G <host>`
// would for the keywords the transport uses. Parsing and Host patterns
// are github.com/kevinburke/ssh_config's; this type adds what that library
// lacks: Include evaluated in place under the enclosing block (as
// OpenSSH's readconf.c does), `Match` with several criteria and comma
// lists (host, originalhost, user, localuser, all; exec, canonical, final
// and the rest never match, since Brine runs no local commands), values
// that accumulate (IdentityFile, CertificateFile), and %-token expansion.
//
// Lookup is safe for concurrent use; included files are parsed once.
type SSHConfig struct {
	// File is the file read; empty for a config that does not exist.
	File string
	home string
	root *configFile

	mu       sync.Mutex
	included map[string]includeResult
}

type includeResult struct {
	f   *configFile
	err error
}

// parseIncluded parses an included file once per SSHConfig.
func (sc *SSHConfig) parseIncluded(path string) (*configFile, error) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if r, ok := sc.included[path]; ok {
		return r.f, r.err
	}
	f, err := parseConfigFile(path)
	if sc.included == nil {
		sc.included = map[string]includeResult{}
	}
	sc.included[path] = includeResult{f, err}
	return f, err
}

// configFile is one parsed file: the library's blocks and the Match
// criteria of the blocks that stand in for Match lines.
type configFile struct {
	path    string
	cfg     *ssh_config.Config
	matches map[string][]matchCriterion // by placeholder pattern
}

type matchCriterion struct {
	name string // lowercased: all, host, originalhost, user, localuser, exec, …
	arg  string
}

// maxConfigDepth is OpenSSH's READCONF_MAX_DEPTH for nested Includes.
const maxConfigDepth = 16

// matchPlaceholder prefixes the Host pattern that replaces a Match line
// before the library parses the file (it rejects most Match criteria).
const matchPlaceholder = "brine-match-placeholder-"

// includeKeyword replaces Include so the library keeps it as a plain
// keyword in its block instead of reading the files itself.
const includeKeyword = "brineinclude"

// LoadSSHConfig reads path and remembers home for ~ and relative Include
// paths (under <home>/.ssh). A missing file is an empty config, as for
// OpenSSH; a malformed one is an error naming it.
func LoadSSHConfig(path, home string) (*SSHConfig, error) {
	sc := &SSHConfig{home: home}
	f, err := parseConfigFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return sc, nil
	}
	if err != nil {
		return nil, err
	}
	sc.File, sc.root = path, f
	return sc, nil
}

func parseConfigFile(path string) (*configFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f := &configFile{path: path, matches: map[string][]matchCriterion{}}
	src, err := f.rewrite(data)
	if err != nil {
		return nil, fmt.Errorf("read ssh config %s: %w", path, err)
	}
	if f.cfg, err = ssh_config.DecodeBytes(src); err != nil {
		return nil, fmt.Errorf("read ssh config %s: %w", path, err)
	}
	return f, nil
}

// rewrite turns each Match line into a Host line with a unique placeholder
// pattern, recording its criteria, and each Include into includeKeyword.
func (f *configFile) rewrite(data []byte) ([]byte, error) {
	lines := bytes.Split(data, []byte("\n"))
	for i, raw := range lines {
		key, rest := splitConfigLine(string(raw))
		switch strings.ToLower(key) {
		case "match":
			crit, err := parseMatch(rest)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", i+1, err)
			}
			ph := matchPlaceholder + strconv.Itoa(i+1)
			f.matches[ph] = crit
			lines[i] = []byte("Host " + ph)
		case "include":
			lines[i] = []byte(includeKeyword + " " + rest)
		}
	}
	return bytes.Join(lines, []byte("\n")), nil
}

// splitConfigLine returns a line's keyword and the rest, for `Key value`
// and `Key=value`.
func splitConfigLine(s string) (string, string) {
	s = strings.TrimSpace(strings.TrimSuffix(s, "\r"))
	if s == "" || s[0] == '#' {
		return "", ""
	}
	end := strings.IndexAny(s, " \t=")
	if end < 0 {
		return s, ""
	}
	rest := strings.TrimLeft(s[end:], " \t")
	rest = strings.TrimLeft(strings.TrimPrefix(rest, "="), " \t")
	return s[:end], rest
}

func parseMatch(rest string) ([]matchCriterion, error) {
	if i := strings.Index(rest, " #"); i >= 0 {
		rest = rest[:i]
	}
	fields := strings.Fields(rest)
	if len(fields) == 0 {
		return nil, errors.New("a Match line needs a criterion")
	}
	var out []matchCriterion
	for i := 0; i < len(fields); i++ {
		name := strings.ToLower(fields[i])
		switch strings.TrimPrefix(name, "!") {
		case "all", "canonical", "final":
			out = append(out, matchCriterion{name: name})
			continue
		}
		if i+1 >= len(fields) {
			return nil, fmt.Errorf("the Match criterion %s needs an argument", fields[i])
		}
		i++
		out = append(out, matchCriterion{name: name, arg: strings.Trim(fields[i], `"`)})
	}
	return out, nil
}

// HostConfig is what an SSHConfig says about one host. Empty fields were
// not set; paths are expanded (~ and the %d %h %n %p %r %u %i %l %% tokens).
type HostConfig struct {
	HostName              string
	Port                  int
	User                  string
	IdentityFiles         []string
	CertificateFiles      []string
	IdentitiesOnly        string // "yes", "no" or ""
	ProxyJump             string
	UserKnownHostsFiles   []string
	GlobalKnownHostsFiles []string
	StrictHostKeyChecking string // yes, no, accept-new, off, ask or ""
	HashKnownHosts        string
	ConnectTimeout        time.Duration
	ServerAliveInterval   time.Duration
	ServerAliveCountMax   int
	// Warnings are problems met on the way (an Include that does not
	// parse, nesting too deep); the lookup went on without them.
	Warnings []string
}

// lookup collects, for one host, the first value of each keyword and
// every value of the accumulating ones, in file order.
type lookup struct {
	sc       *SSHConfig
	alias    string
	user     string // explicit remote user ("" if none)
	local    string
	first    map[string]string
	multi    map[string][]string
	warnings []string
}

// accumulating keywords keep every value, as OpenSSH does.
var accumulating = map[string]bool{"identityfile": true, "certificatefile": true}

// Lookup resolves alias (the name the roster dials). user is the remote
// user given explicitly by roster or command line, "" when none: it feeds
// `Match user` and %r, as OpenSSH's -l does.
func (sc *SSHConfig) Lookup(alias, user string) HostConfig {
	l := &lookup{sc: sc, alias: strings.ToLower(alias), user: user, local: localUserName(),
		first: map[string]string{}, multi: map[string][]string{}}
	if sc.root != nil {
		l.file(sc.root, 0)
	}
	return l.result()
}

func (l *lookup) file(f *configFile, depth int) {
	for _, h := range f.cfg.Hosts {
		if !l.matches(f, h) {
			continue
		}
		for _, n := range h.Nodes {
			kv, ok := n.(*ssh_config.KV)
			if !ok {
				continue
			}
			key := strings.ToLower(kv.Key)
			switch {
			case key == includeKeyword:
				l.include(f, kv.Value, depth)
			case accumulating[key]:
				l.multi[key] = append(l.multi[key], kv.Value)
			default:
				if _, seen := l.first[key]; !seen {
					l.first[key] = kv.Value
				}
			}
		}
	}
}

// include reads the files an Include names (globs; relative to ~/.ssh)
// and evaluates them in place; the enclosing block already matched.
func (l *lookup) include(from *configFile, args string, depth int) {
	if depth+1 > maxConfigDepth {
		l.warnings = append(l.warnings, "Include nested too deep in "+from.path)
		return
	}
	for _, a := range strings.Fields(args) {
		a = strings.Trim(a, `"`)
		switch {
		case strings.HasPrefix(a, "~/"):
			a = filepath.Join(l.sc.home, a[2:])
		case !filepath.IsAbs(a):
			a = filepath.Join(l.sc.home, ".ssh", a)
		}
		names, _ := filepath.Glob(a)
		slices.Sort(names)
		for _, name := range names {
			f, err := l.sc.parseIncluded(name)
			if err != nil {
				l.warnings = append(l.warnings, err.Error())
				continue
			}
			l.file(f, depth+1)
		}
	}
}

func (l *lookup) matches(f *configFile, h *ssh_config.Host) bool {
	if len(h.Patterns) == 1 {
		if crit, ok := f.matches[h.Patterns[0].String()]; ok {
			return l.matchCriteria(crit)
		}
	}
	return matchPatterns(h.Patterns, l.alias)
}

// matchCriteria is OpenSSH's match_cfg_line for the criteria Brine can
// decide: all must hold.
func (l *lookup) matchCriteria(crit []matchCriterion) bool {
	for _, c := range crit {
		name := strings.TrimPrefix(c.name, "!")
		var ok bool
		switch name {
		case "all":
			ok = true
		case "host", "originalhost":
			ok = matchList(c.arg, l.alias)
		case "user":
			ok = matchList(c.arg, l.remoteUser())
		case "localuser":
			ok = matchList(c.arg, l.local)
		default: // exec, canonical, final, address, tagged, …
			return false
		}
		if strings.HasPrefix(c.name, "!") {
			ok = !ok
		}
		if !ok {
			return false
		}
	}
	return true
}

// matchList matches a comma-separated pattern list (with ! negations).
func matchList(list, s string) bool {
	var pats []*ssh_config.Pattern
	for _, p := range strings.Split(list, ",") {
		if pat, err := ssh_config.NewPattern(strings.ToLower(p)); err == nil {
			pats = append(pats, pat)
		}
	}
	return matchPatterns(pats, strings.ToLower(s))
}

// matchPatterns is OpenSSH's match_hostname over the library's parsed
// patterns: one matches and no negated one does. It matches with
// OpenSSH's wildcards itself, because the library compiles ? to "zero or
// one character" where OpenSSH wants exactly one.
func matchPatterns(pats []*ssh_config.Pattern, s string) bool {
	hit := false
	for _, p := range pats {
		pat, neg := strings.CutPrefix(p.String(), "!")
		if sshpattern.Match(pat, s) {
			if neg {
				return false
			}
			hit = true
		}
	}
	return hit
}

func (l *lookup) remoteUser() string {
	if l.user != "" {
		return l.user
	}
	if u := l.first["user"]; u != "" {
		return u
	}
	return l.local
}

func (l *lookup) result() HostConfig {
	r := HostConfig{
		User:                  l.first["user"],
		IdentitiesOnly:        strings.ToLower(l.first["identitiesonly"]),
		ProxyJump:             l.first["proxyjump"],
		StrictHostKeyChecking: strings.ToLower(l.first["stricthostkeychecking"]),
		HashKnownHosts:        strings.ToLower(l.first["hashknownhosts"]),
	}
	if h := l.first["hostname"]; h != "" {
		r.HostName = expandTokens(h, map[byte]string{'h': l.alias, '%': "%"})
	}
	r.Warnings = l.warnings
	r.Port, _ = strconv.Atoi(l.first["port"])
	r.ConnectTimeout = seconds(l.first["connecttimeout"])
	r.ServerAliveInterval = seconds(l.first["serveraliveinterval"])
	r.ServerAliveCountMax, _ = strconv.Atoi(l.first["serveralivecountmax"])
	tokens := l.tokens(r)
	for _, v := range l.multi["identityfile"] {
		if !strings.EqualFold(v, "none") {
			r.IdentityFiles = append(r.IdentityFiles, l.path(v, tokens))
		}
	}
	for _, v := range l.multi["certificatefile"] {
		if !strings.EqualFold(v, "none") {
			r.CertificateFiles = append(r.CertificateFiles, l.path(v, tokens))
		}
	}
	for _, v := range strings.Fields(l.first["userknownhostsfile"]) {
		r.UserKnownHostsFiles = append(r.UserKnownHostsFiles, l.path(v, tokens))
	}
	for _, v := range strings.Fields(l.first["globalknownhostsfile"]) {
		r.GlobalKnownHostsFiles = append(r.GlobalKnownHostsFiles, l.path(v, tokens))
	}
	return r
}

func (l *lookup) tokens(r HostConfig) map[byte]string {
	host := r.HostName
	if host == "" {
		host = l.alias
	}
	port := r.Port
	if port == 0 {
		port = DefaultPort
	}
	short, _ := os.Hostname()
	short, _, _ = strings.Cut(short, ".")
	return map[byte]string{'%': "%", 'd': l.sc.home, 'h': host, 'n': l.alias, 'p': strconv.Itoa(port),
		'r': l.remoteUser(), 'u': l.local, 'i': strconv.Itoa(os.Getuid()), 'l': short}
}

func (l *lookup) path(v string, tokens map[byte]string) string {
	v = strings.Trim(v, `"`)
	if v == "~" || strings.HasPrefix(v, "~/") {
		v = filepath.Join(l.sc.home, strings.TrimPrefix(v[1:], "/"))
	}
	return expandTokens(v, tokens)
}

// expandTokens replaces %x for the known tokens and leaves others as written.
func expandTokens(s string, tokens map[byte]string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+1 < len(s) {
			if v, ok := tokens[s[i+1]]; ok {
				b.WriteString(v)
				i++
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func seconds(s string) time.Duration {
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return 0
	}
	return time.Duration(n) * time.Second
}

func localUserName() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return os.Getenv("USER")
}
