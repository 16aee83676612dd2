package master

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/brinesalt/brine/internal/crypt"
	"github.com/brinesalt/brine/internal/eauth"
	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/saltyaml"
	"github.com/brinesalt/brine/state/target"
)

// Peer publish: minions publish jobs to other minions (minion_pub,
// pub_ret) and run runners (minion_runner) when the master's peer and
// peer_run options allow it (salt/master.py AESFuncs and
// salt/daemons/masterapi.py). Every refusal is Salt's: an empty
// mapping, with nothing published or run.

// Request commands of peer publish.
const (
	cmdMinionPub    = "minion_pub"
	cmdMinionRunner = "minion_runner"
	cmdPubRet       = "pub_ret"
)

// onPeer dispatches a peer publish request of the authenticated minion
// id; a load naming another minion is refused, as Salt's token check
// refuses it.
func (m *Master) onPeer(ctx context.Context, id, cmd string, load *ordered.Map) any {
	if lid, _ := load.Value("id").(string); lid != id {
		m.log.Warn("peer request whose id is not the sender's refused", "id", id, "load_id", lid)
		return ordered.New()
	}
	switch cmd {
	case cmdMinionPub:
		return m.minionPub(ctx, id, load)
	case cmdMinionRunner:
		return m.minionRunner(ctx, id, load)
	}
	return m.pubRet(ctx, id, load)
}

// peerPerms collects the entries of the peer or peer_run mapping whose
// key, a regular expression matched at the start (re.match), matches id.
func (m *Master) peerPerms(v any, option, id string) ([]any, bool) {
	acl, ok := v.(*ordered.Map)
	if !ok {
		return nil, false
	}
	var perms []any
	acl.Range(func(k, v any) bool {
		re, err := regexp.Compile("^(?:" + ordered.KeyString(k) + ")")
		if err != nil {
			m.log.Warn("invalid regular expression in "+option, "pattern", ordered.KeyString(k), logattr.Err, err)
			return true
		}
		if l, isList := v.([]any); isList && re.MatchString(id) {
			perms = append(perms, l...)
		}
		return true
	})
	return perms, true
}

// verifyMinionPublish is AESFuncs.__verify_minion_publish with
// CkMinions.auth_check(publish_validate=True): the peer ACL allows the
// function on every minion the target reaches, and a pillar or compound
// target reaches no more minions than its exact form would.
func (m *Master) verifyMinionPublish(id string, load *ordered.Map) bool {
	for _, k := range []string{"fun", "arg", "tgt", "ret", "id"} {
		if !load.Has(k) {
			return false
		}
	}
	fun, _ := load.Value("fun").(string)
	if strings.HasPrefix(fun, "publish.") {
		return false
	}
	perms, ok := m.peerPerms(m.o.Raw.Value("peer"), "peer", id)
	if !ok {
		return false
	}
	args, _ := load.Value("arg").([]any)
	p := eauth.Publish{Funs: []string{fun}, Args: [][]any{args}, Tgt: load.Value("tgt"), TgtType: tgtTypeOf(load)}
	if strings.Contains(fun, ",") {
		// 'arg': [['cat', '/proc/cpuinfo'], [], ['foo']]
		p.Funs, p.Args = strings.Split(fun, ","), nil
		for _, a := range args {
			var words []any
			for _, w := range strings.Fields(ordered.KeyString(a)) {
				words = append(words, w)
			}
			p.Args = append(p.Args, words)
		}
	}
	p.Minions = m.expandTarget(p.Tgt, p.TgtType)
	exact := ""
	switch strings.ToLower(p.TgtType) {
	case "pillar", "pillar_pcre":
		exact = "pillar_exact"
	case "compound":
		exact = "compound_pillar_exact"
	}
	if exact != "" {
		valid := m.expandTarget(p.Tgt, exact)
		for _, mn := range p.Minions {
			if !slices.Contains(valid, mn) {
				return false
			}
		}
	}
	return eauth.AuthCheck(perms, p, nil, m.expandTarget)
}

func tgtTypeOf(load *ordered.Map) string {
	if t, ok := load.Value("tgt_type").(string); ok && t != "" {
		return t
	}
	return "glob"
}

// minionPub is masterapi.minion_pub: publish the job for the minion and
// answer {jid, minions}; the jid is recorded as the minion's under
// cachedir/publish_auth, for pub_ret.
func (m *Master) minionPub(ctx context.Context, id string, load *ordered.Map) any {
	empty := ordered.New()
	if !m.verifyMinionPublish(id, load) {
		m.log.Warn("peer publication refused by the peer ACL", "id", id, logattr.Fun, load.Value("fun"))
		return empty
	}
	args, _ := load.Value("arg").([]any)
	tgt, tgtType := load.Value("tgt"), tgtTypeOf(load)
	if strings.HasPrefix(tgtType, "node") {
		expr, ok := m.o.Nodegroups[ordered.KeyString(tgt)]
		if !ok {
			return empty
		}
		tgt, tgtType = expr, "compound"
	}
	ret, _ := load.Value("ret").(string)
	fun, _ := load.Value("fun").(string)
	jid, _, err := m.Publish(ctx, PublishRequest{Tgt: tgt, TgtType: tgtType, Fun: fun,
		Arg: parseInput(args, noParse(load)), Ret: ret})
	if err != nil {
		m.log.Warn("peer publication failed", "id", id, logattr.Err, err)
		return empty
	}
	kind, err := target.ParseKind(tgtType)
	var minions []string
	if err == nil {
		minions, _ = m.CheckMinions(load.Value("tgt"), kind, "")
	}
	if err := m.writePublishAuth(jid, id); err != nil {
		m.log.Error("publish_auth not written; pub_ret will refuse the job", logattr.JID, jid, logattr.Err, err)
	}
	return ordered.FromPairs("jid", jid, "minions", strList(minions))
}

func (m *Master) publishAuthPath(jid string) string {
	return filepath.Join(m.o.CacheDir, "publish_auth", filepath.Base(jid))
}

func (m *Master) writePublishAuth(jid, id string) error {
	path := m.publishAuthPath(jid)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("write publish_auth: %w", err)
	}
	return crypt.WriteFileReplace(path, []byte(id), 0o600)
}

// pubRet is AESFuncs.pub_ret: the returns of a job the minion published
// itself, as LocalClient.get_cache_returns gives them:
// {minion: {"ret": return[, "out": outputter]}}.
func (m *Master) pubRet(ctx context.Context, id string, load *ordered.Map) any {
	empty := ordered.New()
	jid, _ := load.Value("jid").(string)
	if jid == "" {
		return empty
	}
	owner, err := os.ReadFile(m.publishAuthPath(jid))
	if err != nil || string(owner) != id {
		return empty
	}
	res, err := m.store().GetJID(ctx, jid)
	if err != nil || res == nil {
		return empty
	}
	out := ordered.New()
	res.Range(func(k, v any) bool {
		r, _ := v.(*ordered.Map)
		entry := ordered.FromPairs("ret", r.Value("return"))
		if o, ok := r.Get("out"); ok {
			entry.Set("out", o)
		}
		out.Set(k, entry)
		return true
	})
	return out
}

// minionRunner is masterapi.minion_runner: run the runner when peer_run
// allows the function to the minion, and answer its return.
func (m *Master) minionRunner(ctx context.Context, id string, load *ordered.Map) any {
	empty := ordered.New()
	fun, _ := load.Value("fun").(string)
	if !load.Has("fun") || !load.Has("arg") {
		return empty
	}
	perms, ok := m.peerPerms(m.o.Raw.Value("peer_run"), "peer_run", id)
	if !ok {
		return empty
	}
	good := false
	for _, p := range perms {
		if re, err := regexp.Compile("^(?:" + ordered.KeyString(p) + ")"); err == nil && re.MatchString(fun) {
			good = true
		}
	}
	if !good {
		m.log.Warn(fmt.Sprintf("Minion id %s is not who it says it is!", id))
		return empty
	}
	args, _ := load.Value("arg").([]any)
	pos, kw := saltyaml.SplitKwargs(parseInput(args, noParse(load)))
	ret, err := m.runRunner(ctx, m.newJID(ctx), fun, pos, kw, "", true)
	var nr *NoRunnerError
	if errors.As(err, &nr) {
		// salt.runner.Runner.run answers the SaltClientError's text.
		return nr.Error() + "."
	}
	if err != nil {
		return "Exception occurred in runner " + fun + ": " + err.Error()
	}
	return ret
}

func noParse(load *ordered.Map) []string {
	var out []string
	if l, ok := load.Value("no_parse").([]any); ok {
		for _, x := range l {
			out = append(out, ordered.KeyString(x))
		}
	}
	return out
}

// parseInput is salt.utils.args.parse_input with condition: strings are
// YAML-loaded and name=value strings become keyword arguments, a
// {"__kwarg__": True} mapping's keys too; the keywords go last as one
// {"__kwarg__": True, ...} mapping.
func parseInput(args []any, noParse []string) []any {
	out := []any{}
	kw := ordered.New()
	for _, a := range args {
		switch x := a.(type) {
		case string:
			c := saltyaml.ConditionedInput([]string{x}, noParse...)
			if d, ok := c[0].(*ordered.Map); ok && len(c) == 1 && d.Value("__kwarg__") == true && isKwargString(x) {
				d.Range(func(k, v any) bool {
					if k != "__kwarg__" {
						kw.Set(k, v)
					}
					return true
				})
				continue
			}
			out = append(out, c...)
		case *ordered.Map:
			if x.Value("__kwarg__") == true {
				x.Range(func(k, v any) bool {
					if k != "__kwarg__" {
						kw.Set(k, v)
					}
					return true
				})
				continue
			}
			out = append(out, x)
		default:
			out = append(out, a)
		}
	}
	if kw.Len() > 0 {
		d := ordered.FromPairs("__kwarg__", true)
		kw.Range(func(k, v any) bool { d.Set(k, v); return true })
		out = append(out, d)
	}
	return out
}

func isKwargString(s string) bool {
	_, _, ok := saltyaml.ParseKwarg(s)
	return ok
}
