package netapi

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/brinesalt/brine/internal/eauth"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/master"
	"github.com/brinesalt/brine/sshexec/sshrun"
	"github.com/brinesalt/brine/state/target"
)

// sshKeys are the lowstate keys the ssh client reads: SSHClient.cmd_sync's
// own and the sanitize_kwargs options Brine's salt-ssh has
// (salt/client/ssh/client.py). The others Salt lists (ssh_port,
// ssh_sudo_user, ssh_askpass, ssh_update_roster, ssh_log_file, rosters,
// extra_filerefs, min_extra_mods, thin_extra_mods, saltfile, host,
// verbose, static) are warned about and not used: rosters in particular
// must never come from the request, or it could name its own roster
// directories.
var sshKeys = []string{"client", "tgt", "fun", "arg", "kwarg", "tgt_type", "expr_form", "batch", "timeout", "jid", "token",
	"eauth", "username", "password", "ssh_user", "ssh_passwd", "ssh_priv", "ssh_priv_passwd", "ssh_sudo",
	"ssh_identities_only", "ssh_options", "ssh_max_procs", "ssh_timeout", "ssh_remote_port_forwards", "raw_shell",
	"refresh_cache", "roster", "roster_file", "ignore_host_keys", "no_host_keys", "ssh_wipe", "rand_thin_dir",
	"regen_thin", "ssh_run_pre_flight", "ssh_key_deploy", "ssh_scan_ports", "ssh_scan_timeout"}

// sshClient is NetapiClient.ssh: salt-ssh run in this process with the
// sshexec packages, as the salt-ssh command runs it, after Salt's
// _authorize_ssh (the caller's ACL against the roster's hosts). The
// answer is {id: {return, retcode, id, fun, fun_args, jid}}.
func (s *Server) sshClient(ctx context.Context, chunk *ordered.Map, creds master.Creds) (any, error) {
	if s.masterCfg == nil {
		return nil, httpError(400, "The ssh client is not available in this salt-api")
	}
	s.warnUnused("ssh", chunk, sshKeys)
	for _, k := range []string{"tgt", "fun"} {
		if !chunk.Has(k) {
			return nil, fmt.Errorf("ssh: missing %q", k)
		}
	}
	set, err := s.sshSettings(chunk)
	if err != nil {
		return nil, err
	}
	sr, err := sshrun.New(ctx, s.masterCfg, set, s.log)
	if err != nil {
		return nil, httpError(400, err.Error())
	}
	if err := s.authorizeSSH(ctx, chunk, creds, sr, set); err != nil {
		return nil, err
	}
	if err := sr.Select(ctx); err != nil {
		return nil, httpError(400, err.Error())
	}
	out := ordered.New()
	funArgs := set.JobArgs
	for r := range sr.Results(ctx) {
		out.Set(r.ID, ordered.FromPairs("return", r.Return, "retcode", r.Retcode, "id", r.ID, "fun", set.Fun,
			"fun_args", funArgs, "jid", sr.JID()))
	}
	return out, nil
}

// sshSettings is SSHClient._prep_ssh with sanitize_kwargs: the chunk's
// allowed options, strings naming ProxyCommand dropped as Salt drops
// them, and the roster file resolved inside the master's rosters
// directories.
func (s *Server) sshSettings(chunk *ordered.Map) (sshrun.Settings, error) {
	o := sshOpts{chunk: chunk, s: s}
	tgtType := str(chunk.Value("tgt_type"))
	if tgtType == "" {
		tgtType = str(chunk.Value("expr_form"))
	}
	if tgtType == "" {
		tgtType = "glob"
	}
	args, _ := chunk.Value("arg").([]any)
	fargs := conditionInput(args, chunk.Value("kwarg"))
	set := sshrun.Settings{ConfigDir: s.configDir, Target: targetString(chunk.Value("tgt")), TgtType: tgtType,
		Fun: str(chunk.Value("fun")), JobArgs: fargs, Set: map[string]bool{}, JID: str(chunk.Value("jid")),
		Roster: o.str("roster"), User: o.str("ssh_user"), Passwd: o.str("ssh_passwd"), Priv: o.str("ssh_priv"),
		PrivPasswd: o.str("ssh_priv_passwd"), Sudo: o.bool("ssh_sudo"), IdentitiesOnly: o.bool("ssh_identities_only"),
		SSHOptions: o.list("ssh_options"), MaxProcs: o.int("ssh_max_procs"), Timeout: o.int("ssh_timeout"),
		RemotePortForwards: o.str("ssh_remote_port_forwards"), Raw: truthy(chunk.Value("raw_shell")),
		Refresh: o.bool("refresh_cache"), IgnoreHostKeys: o.bool("ignore_host_keys"), NoHostKeys: o.bool("no_host_keys"),
		Wipe: o.bool("ssh_wipe"), RandThin: o.bool("rand_thin_dir"), RegenThin: o.bool("regen_thin"),
		PreFlight: o.bool("ssh_run_pre_flight"), KeyDeploy: o.bool("ssh_key_deploy"),
		ScanPorts: o.str("ssh_scan_ports"), ScanTimeout: float64(o.int("ssh_scan_timeout"))}
	if set.Roster == "" {
		set.Roster = "flat"
	}
	if set.ScanPorts == "" {
		set.ScanPorts = "22"
	}
	if set.ScanTimeout == 0 {
		set.ScanTimeout = 0.01
	}
	for key, flag := range map[string]string{"ssh_user": "user", "ssh_priv": "priv", "ssh_max_procs": "max-procs",
		"roster": "roster", "ssh_scan_ports": "scan-ports", "ssh_scan_timeout": "scan-timeout",
		"ssh_remote_port_forwards": "remote-port-forwards"} {
		set.Set[flag] = chunk.Has(key) && o.ok(key)
	}
	if set.User == "" {
		set.User = "root"
	}
	if set.Raw {
		words := []string{set.Fun}
		for _, a := range args {
			words = append(words, str(a))
		}
		set.RawCommand = strings.Join(words, " ")
	} else {
		set.Arg, set.Kwarg = splitArgs(fargs)
	}
	if o.err != nil {
		return set, o.err
	}
	var err error
	set.RosterFile, err = s.rosterFile(str(chunk.Value("roster_file")))
	return set, err
}

// rosterFile is salt.roster.get_roster_file with __disable_custom_roster:
// a roster_file from the request must name a file inside one of the
// master's rosters directories (Salt falls back to the path as given
// when it is not found there; Brine refuses it); without one, the
// master's roster_file, else <config_dir>/roster.
func (s *Server) rosterFile(req string) (string, error) {
	if req == "" {
		return "", nil // sshrun takes roster_file from the config, else <config_dir>/roster
	}
	rel := filepath.Clean("/" + strings.Trim(req, "/"))
	for _, dir := range s.cfg.Rosters {
		p := filepath.Join(dir, rel)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p, nil
		}
	}
	return "", httpError(400, fmt.Sprintf("Roster file %q not found in the master's rosters directories", req))
}

// splitArgs is the minion side of condition_input: a trailing
// {"__kwarg__": True, ...} is the keyword arguments.
func splitArgs(args []any) ([]any, *ordered.Map) {
	if n := len(args); n > 0 {
		if kw, ok := args[n-1].(*ordered.Map); ok && kw.Value("__kwarg__") == true {
			kw = kw.Copy()
			kw.Delete("__kwarg__")
			return args[:n-1], kw
		}
	}
	return args, ordered.New()
}

// targetString is a tgt as salt-ssh takes it: a list is comma-joined.
func targetString(v any) string {
	if l, ok := v.([]any); ok {
		parts := make([]string, len(l))
		for i, e := range l {
			parts[i] = str(e)
		}
		return strings.Join(parts, ",")
	}
	return str(v)
}

// authorizeSSH is NetapiClient._authorize_ssh: the caller's auth list
// (from the token, or the eauth credentials) must allow fun with its
// arguments on every roster host the target reaches.
func (s *Server) authorizeSSH(ctx context.Context, chunk *ordered.Map, creds master.Creds, sr *sshrun.Run, set sshrun.Settings) error {
	perms, err := s.authList(ctx, creds)
	if err != nil {
		return err
	}
	var ids []string
	for _, t := range sr.Targets() {
		ids = append(ids, t.ID)
	}
	expand := func(tgt any, tgtType string) []string {
		m, err := target.Compile(tgt, target.Kind(tgtType), target.Options{})
		if err != nil {
			return nil
		}
		var out []string
		for _, id := range ids {
			if m.Match(&target.Minion{ID: id}) {
				out = append(out, id)
			}
		}
		return out
	}
	p := eauth.Publish{Funs: []string{set.Fun}, Args: [][]any{set.JobArgs}, Tgt: chunk.Value("tgt"), TgtType: set.TgtType, Minions: ids}
	if !eauth.AuthCheck(perms, p, nil, expand) {
		return httpError(401, "Authorization error occurred.")
	}
	return nil
}

// authList is LoadAuth.check_authentication's auth_list: a token's perms,
// or those of the eauth credentials (authenticated by making a token
// that is removed again).
func (s *Server) authList(ctx context.Context, creds master.Creds) ([]any, error) {
	var td *ordered.Map
	err := s.pool.with(ctx, func(cl *master.Client) error {
		var e error
		if creds.Token != "" {
			td, e = cl.GetToken(ctx, creds.Token)
			return e
		}
		if td, e = cl.MkToken(ctx, creds, 0); e != nil {
			return e
		}
		tok, _ := td.Value("token").(string)
		return cl.DelToken(ctx, tok)
	})
	if err != nil {
		return nil, authErr(err)
	}
	perms, _ := td.Value("perms").([]any)
	return perms, nil
}

// sshOpts reads sanitize_kwargs' typed options from a chunk.
type sshOpts struct {
	chunk *ordered.Map
	s     *Server
	err   error
}

// ok reports whether key's value survived sanitizing.
func (o *sshOpts) ok(key string) bool {
	v := o.chunk.Value(key)
	if s, isStr := v.(string); isStr {
		return !strings.Contains(s, "ProxyCommand")
	}
	return true
}

func (o *sshOpts) str(key string) string {
	v, ok := o.chunk.Get(key)
	if !ok || v == nil {
		return ""
	}
	s := str(v)
	if strings.Contains(s, "ProxyCommand") {
		o.s.log.Warn("Filter unsafe value for kwarg " + key)
		return ""
	}
	return s
}

func (o *sshOpts) bool(key string) bool { return truthy(o.chunk.Value(key)) }

func (o *sshOpts) int(key string) int {
	n, err := intOpt(o.chunk, key, 0)
	if err != nil && o.err == nil {
		o.err = err
	}
	return n
}

func (o *sshOpts) list(key string) []string {
	v, ok := o.chunk.Get(key)
	if !ok || v == nil {
		return nil
	}
	l, isList := v.([]any)
	if !isList {
		l = []any{v}
	}
	var out []string
	for _, e := range l {
		if s := str(e); !strings.Contains(s, "ProxyCommand") {
			out = append(out, s)
		} else {
			o.s.log.Warn("Filter unsafe value for kwarg " + key)
		}
	}
	return out
}
