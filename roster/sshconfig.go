package roster

import (
	"context"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"

	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/internal/sshpattern"
	"github.com/hashicorp/go-multierror"
)

func init() { Register("sshconfig", openSSHConfig) }

// SSHConfigRoster is the sshconfig roster (salt/roster/sshconfig.py):
// one target for every name in a `Host` line of ssh_config_file (default
// ~/.ssh/config), patterns with *, ? or ! left out, in file order, with
// Include files read (relative paths under ~/.ssh, globs, as OpenSSH
// does).
//
// As Salt does, host is the alias itself: the connection layer reads the
// same ssh_config_file for the host it dials (cmd/salt-ssh's dialer
// resolves HostName, ProxyJump, host key settings and the rest from it,
// as the ssh binary does for Salt), so every setting of the alias's
// blocks applies, not only those a roster has keys for. User, Port and
// IdentityFile are also mapped, as in Salt, but resolved as OpenSSH
// would (ssh -G) rather than read from the Host block's lines only: the
// first value from every block that matches, in order, `Host *`
// defaults included (Salt lets wildcard blocks override specific ones):
//
//	User                       → user
//	Port                       → port
//	IdentityFile (the first; ~, %d, %u, %h, %n, %r, %% expanded) → priv
//	IdentitiesOnly yes         → identities_only
//
// `Match all` blocks apply to every alias, `Match host`/`originalhost`
// compare the alias; other Match criteria (exec, user, canonical, …) are
// not evaluated and their blocks are skipped. roster_defaults apply under
// the config's values (Salt's sshconfig roster ignores them).
type SSHConfigRoster struct {
	File    string
	Entries []Entry
	cfg     Config
}

func openSSHConfig(_ context.Context, cfg Config) (Roster, error) {
	file := cfg.SSHConfigFile
	if file == "" {
		home, _ := os.UserHomeDir()
		file = filepath.Join(home, ".ssh", "config")
	}
	sc, err := ParseSSHConfig(file, osConfigFS{}, sshHome())
	if err != nil {
		return nil, err
	}
	return NewSSHConfigRoster(sc, cfg)
}

// NewSSHConfigRoster resolves every listed alias of sc into a target.
func NewSSHConfigRoster(sc *SSHConfig, cfg Config) (*SSHConfigRoster, error) {
	r := &SSHConfigRoster{File: sc.File, cfg: cfg}
	defaults, errs := defaultFields(cfg.RosterDefaults, cfg.Options)
	local := localUser()
	for _, h := range sc.Hosts {
		fields, files := sc.fields(h.Name, cfg.Options.User, local)
		t, ferrs := buildTarget(h.Name, mergeFields(defaults, fields), cfg.Options)
		for _, e := range ferrs {
			if re, ok := e.(*Error); ok && re.Line > 0 {
				key, _, _ := strings.Cut(re.Msg, ":")
				re.File = files[key]
				errs = append(errs, re)
			}
		}
		t.File, t.Line = h.File, h.Line
		r.Entries = append(r.Entries, Entry{ID: h.Name, Line: h.Line, Target: t})
	}
	if len(errs) > 0 {
		return nil, multierror.Append(nil, errs...)
	}
	return r, nil
}

// Targets selects aliases by glob, pcre, list or nodegroup.
func (r *SSHConfigRoster) Targets(_ context.Context, tgt, tgtType string) ([]Target, error) {
	m, err := r.cfg.matcher(tgt, tgtType)
	if err != nil {
		return nil, err
	}
	var out []Target
	for _, e := range r.Entries {
		if m(e.ID) {
			out = append(out, e.Target)
		}
	}
	return out, nil
}

// fields resolves alias into roster fields, each with the line of the
// value's keyword, and the file each roster key came from (errors are
// reported against them).
func (sc *SSHConfig) fields(alias, defUser, local string) ([]field, map[string]string) {
	files := map[string]string{}
	get := func(key string) (sshOption, bool) {
		o, ok := sc.Lookup(alias, key)
		if ok {
			files[sshRosterKey[key]] = o.File
		}
		return o, ok
	}
	var out []field
	hostname := alias // for %h in IdentityFile
	if o, ok := get("hostname"); ok {
		hostname = expandSSHTokens(o.Args[0], sc.Home, alias, alias, "", local)
	}
	remote := defUser
	if o, ok := get("user"); ok {
		remote = o.Args[0]
		out = append(out, field{key: "user", val: remote, line: o.Line})
	}
	if o, ok := get("port"); ok {
		out = append(out, field{key: "port", val: o.Args[0], line: o.Line})
	}
	if o, ok := get("identityfile"); ok && !strings.EqualFold(o.Args[0], "none") {
		out = append(out, field{key: "priv", val: expandSSHTokens(o.Args[0], sc.Home, hostname, alias, remote, local), line: o.Line})
	}
	if o, ok := get("identitiesonly"); ok {
		out = append(out, field{key: "identities_only", val: strings.EqualFold(o.Args[0], "yes"), line: o.Line})
	}
	return out, files
}

// sshRosterKey maps the ssh_config keywords read onto roster keys.
var sshRosterKey = map[string]string{"user": "user", "port": "port",
	"identityfile": "priv", "identitiesonly": "identities_only"}

// expandSSHTokens expands the ssh_config tokens Brine can know: ~ at the
// start, %d (home), %u (local user), %h (host name), %n (alias), %r
// (remote user) and %%. Others are left as written.
func expandSSHTokens(s, home, host, alias, remote, local string) string {
	if strings.HasPrefix(s, "~/") {
		s = filepath.Join(home, s[2:])
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case '%':
			b.WriteByte('%')
		case 'd':
			b.WriteString(home)
		case 'u':
			b.WriteString(local)
		case 'h':
			b.WriteString(host)
		case 'n':
			b.WriteString(alias)
		case 'r':
			b.WriteString(remote)
		default:
			b.WriteByte('%')
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

func sshHome() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return "/"
	}
	return home
}

func localUser() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return currentUser()
}

// SSHConfig is a parsed ssh_config file with its Includes: the options
// in file order, each with the Host/Match conditions it sits under, and
// the names listed in Host lines.
type SSHConfig struct {
	File    string
	Home    string // the user's home: ~, %d and relative Include paths
	Options []sshOption
	Hosts   []SSHHost
}

// SSHHost is a name from a Host line and where it is.
type SSHHost struct {
	Name string
	File string
	Line int
}

// sshOption is one keyword line (lowercased keyword) and the conditions
// (the Host or Match block, and those of the blocks holding the Include
// that read it) that must all hold for it to apply.
type sshOption struct {
	Key   string
	Args  []string
	File  string
	Line  int
	conds []sshCond
}

// sshCond is one Host line's pattern list, or a Match block: never set
// means it cannot match (an unsupported Match), all means Match all.
type sshCond struct {
	patterns []string
	all      bool
	never    bool
}

func (c sshCond) match(alias string) bool {
	switch {
	case c.never:
		return false
	case c.all:
		return true
	}
	return sshpattern.MatchHost(c.patterns, alias)
}

// Lookup returns the first value of key (lowercase) that applies to
// alias, as ssh -G resolves it.
func (sc *SSHConfig) Lookup(alias, key string) (sshOption, bool) {
	for _, o := range sc.Options {
		if o.Key != key || len(o.Args) == 0 {
			continue
		}
		if !slices.ContainsFunc(o.conds, func(c sshCond) bool { return !c.match(alias) }) {
			return o, true
		}
	}
	return sshOption{}, false
}

// configFS is how ParseSSHConfig reads files, so tests and fuzzing need
// not touch the disk.
type configFS interface {
	ReadFile(name string) ([]byte, error)
	Glob(pattern string) ([]string, error)
}

type osConfigFS struct{}

func (osConfigFS) ReadFile(name string) ([]byte, error)  { return os.ReadFile(name) }
func (osConfigFS) Glob(pattern string) ([]string, error) { return filepath.Glob(pattern) }

// maxIncludeDepth is OpenSSH's READCONF_MAX_DEPTH.
const maxIncludeDepth = 16

// ParseSSHConfig reads file and the files it includes; home is the
// directory relative Include paths are under (<home>/.ssh). A missing
// main file is an error; a missing include is skipped, as in OpenSSH.
func ParseSSHConfig(file string, fsys configFS, home string) (*SSHConfig, error) {
	src, err := fsys.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read ssh config: %w", err)
	}
	p := &sshParser{fsys: fsys, home: home, sc: &SSHConfig{File: file, Home: home}, seen: map[string]bool{}}
	if err := p.parse(src, file, nil, 0); err != nil {
		return nil, err
	}
	return p.sc, nil
}

type sshParser struct {
	fsys configFS
	home string
	sc   *SSHConfig
	seen map[string]bool
}

// parse reads one file under the conditions of the block that included
// it.
func (p *sshParser) parse(src []byte, file string, outer []sshCond, depth int) error {
	var block *sshCond
	for n, raw := range strings.Split(string(src), "\n") {
		line := n + 1
		key, args, err := splitSSHLine(raw)
		if err != nil {
			return &Error{File: file, Line: line, Msg: err.Error()}
		}
		if key == "" {
			continue
		}
		conds := outer
		if block != nil {
			conds = append(slices.Clip(outer), *block)
		}
		switch key {
		case "host":
			if len(args) == 0 {
				return &Error{File: file, Line: line, Msg: "Host needs at least one pattern"}
			}
			block = &sshCond{patterns: args}
			p.listHosts(args, file, line)
		case "match":
			block = matchCond(args)
		case "include":
			for _, a := range args {
				if err := p.include(a, conds, file, line, depth); err != nil {
					return err
				}
			}
		default:
			p.sc.Options = append(p.sc.Options, sshOption{Key: key, Args: args, File: file, Line: line, conds: conds})
		}
	}
	return nil
}

// listHosts records the plain names of a Host line (Salt's sshconfig
// roster skips names with * or ?; Brine also skips negations).
func (p *sshParser) listHosts(args []string, file string, line int) {
	for _, a := range args {
		if a == "" || strings.ContainsAny(a, "*?!") || p.seen[a] {
			continue
		}
		p.seen[a] = true
		p.sc.Hosts = append(p.sc.Hosts, SSHHost{Name: a, File: file, Line: line})
	}
}

func matchCond(args []string) *sshCond {
	if len(args) == 1 && strings.EqualFold(args[0], "all") {
		return &sshCond{all: true}
	}
	c := &sshCond{}
	for i := 0; i < len(args); i++ {
		switch strings.ToLower(args[i]) {
		case "host", "originalhost":
			if i+1 >= len(args) {
				return &sshCond{never: true}
			}
			i++
			c.patterns = append(c.patterns, strings.Split(args[i], ",")...)
		default:
			return &sshCond{never: true}
		}
	}
	if len(c.patterns) == 0 {
		c.never = true
	}
	return c
}

func (p *sshParser) include(arg string, conds []sshCond, file string, line, depth int) error {
	if depth+1 > maxIncludeDepth {
		return &Error{File: file, Line: line, Msg: fmt.Sprintf("Include nested more than %d deep", maxIncludeDepth)}
	}
	pat := arg
	switch {
	case strings.HasPrefix(pat, "~/"):
		pat = filepath.Join(p.home, pat[2:])
	case !filepath.IsAbs(pat):
		pat = filepath.Join(p.home, ".ssh", pat)
	}
	names, err := p.fsys.Glob(pat)
	if err != nil {
		return &Error{File: file, Line: line, Msg: "Include " + arg + ": " + err.Error()}
	}
	slices.Sort(names)
	for _, name := range names {
		src, err := p.fsys.ReadFile(name)
		if err != nil {
			continue
		}
		if err := p.parse(src, name, conds, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// splitSSHLine splits a config line into its lowercased keyword and
// arguments: `Key value`, `Key=value` or `Key = value`, arguments split
// on whitespace with quotes, a # word starting a comment.
func splitSSHLine(s string) (string, []string, error) {
	s = strings.TrimSpace(strings.TrimSuffix(s, "\r"))
	if s == "" || s[0] == '#' {
		return "", nil, nil
	}
	end := strings.IndexAny(s, " \t=")
	if end < 0 {
		return strings.ToLower(s), nil, nil
	}
	key, rest := s[:end], strings.TrimLeft(s[end:], " \t")
	if strings.HasPrefix(rest, "=") {
		rest = strings.TrimLeft(rest[1:], " \t")
	}
	args, err := py.Split(stripINIComment(rest))
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", key, err)
	}
	return strings.ToLower(key), args, nil
}
