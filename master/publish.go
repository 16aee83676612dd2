package master

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/brinesalt/brine/internal/crypt"
	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/pki"
	"github.com/brinesalt/brine/internal/protocol"
	"github.com/brinesalt/brine/internal/transport"
	"github.com/brinesalt/brine/state/target"
)

// PublishRequest is a job to publish (LocalClient.pub's arguments).
type PublishRequest struct {
	Tgt       any
	TgtType   string
	Fun       string
	Arg       []any
	Ret       string
	User      string
	JID       string
	Delimiter string
	Metadata  *ordered.Map
	// RetConfig and RetKwargs are salt --return_config and
	// --return_kwargs, passed to the minions' returners.
	RetConfig string
	RetKwargs *ordered.Map
	// Auth are the caller's credentials, checked before anything is
	// published; the zero Creds is the local root user.
	Auth Creds
	// To is the caller's timeout in seconds, which a master of masters
	// passes to its syndics in the load ("to", LocalClient._prep_pub);
	// 0 means the master's timeout.
	To int
	// MasterID names the master the job came from (a syndic passes its
	// upper master's); empty: this master's master_id, if set.
	MasterID string
	// Relay is the ticket of a relayed copy (salt-cp --relay,
	// docs/RELAY.md): it holds the run's key, so it goes only into the
	// encrypted publication, never the job cache or the event bus.
	Relay *ordered.Map
}

// Publish is ClearFuncs.publish: resolve the minions the target is
// expected to reach (CkMinions.check_minions), record the job, fire
// salt/job/<jid>/new and publish the signed, encrypted load. The caller
// is authenticated and authorized first (external_auth, the publisher
// ACLs); a refusal is an *AuthError and publishes nothing. The job's
// load is stored under the master's own context, so a caller that goes
// away after publishing never leaves a job without its load.
func (m *Master) Publish(ctx context.Context, r PublishRequest) (string, []string, error) {
	kind, err := target.ParseKind(r.TgtType)
	if err != nil {
		return "", nil, fmt.Errorf("publish: %w", err)
	}
	minions, err := m.CheckMinions(r.Tgt, kind, r.Delimiter)
	if err != nil {
		return "", nil, fmt.Errorf("publish: %w", err)
	}
	if err := m.authorizePublish(ctx, &r, minions); err != nil {
		return "", nil, err
	}
	if kind == target.Nodegroup || (kind == target.Compound && strings.Contains(fmt.Sprint(r.Tgt), "N@")) {
		// Minions do not know the nodegroups: the master resolves them
		// and publishes the ids as a list target.
		ids := make([]any, len(minions))
		for i, id := range minions {
			ids[i] = id
		}
		r.Tgt, kind = ids, target.List
	}
	jid := r.JID
	if jid == "" {
		jid = m.newJID(ctx)
	}
	r.Ret = m.withExtJobCache(r.Ret)
	if r.User == "" {
		r.User = "root"
	}
	job := &protocol.Job{Fun: r.Fun, Arg: r.Arg, Tgt: r.Tgt, JID: jid, Ret: r.Ret, TgtType: string(kind),
		User: r.User, Delimiter: r.Delimiter, Kwargs: ordered.New(), MasterID: r.MasterID}
	if job.MasterID == "" {
		job.MasterID = m.o.MasterID
	}
	if r.RetConfig != "" {
		job.Kwargs.Set("ret_config", r.RetConfig)
	}
	if r.Metadata != nil {
		job.Kwargs.Set("metadata", r.Metadata)
	}
	if r.RetKwargs != nil {
		job.Kwargs.Set("ret_kwargs", r.RetKwargs)
	}
	if m.o.OrderMasters {
		job.To = r.To
		if job.To <= 0 {
			job.To = int(m.o.Timeout.Seconds())
		}
	}
	load := job.SaltMap()
	ids := make([]any, len(minions))
	for i, id := range minions {
		ids[i] = id
	}
	m.saveJobLoad(m.baseContext(), jid, load, minions)
	m.bus.Fire(jid, ordered.FromPairs("minions", ids))
	m.bus.Fire(protocol.JobNewTag(jid), ordered.FromPairs("jid", jid, "tgt_type", string(kind), "tgt", r.Tgt,
		"user", r.User, "fun", r.Fun, "arg", orList(r.Arg), "minions", ids, "missing", []any{}))
	if r.Relay != nil {
		load = load.Copy()
		load.Set("relay", r.Relay)
	}
	sigAlgo := ""
	if m.o.SignPubMessages {
		sigAlgo = crypt.PKCS1v15SHA1
	}
	// Publications are encrypted and signed concurrently (the RSA
	// signature is the master's largest cost per job) but go out in
	// serial order: a minion drops a serial lower than one it has seen.
	serial := m.pubs.next()
	frame, err := m.wrapPublish(load, serial, sigAlgo)
	m.pubs.inTurn(serial, func() {
		if err == nil {
			m.sendPublish(frame, kind, minions)
		}
	})
	if err != nil {
		return "", nil, fmt.Errorf("publish %s: %w", jid, err)
	}
	m.log.Info("published", logattr.JID, jid, logattr.Fun, r.Fun, "minions", len(minions))
	return jid, minions, nil
}

// wrapPublish is the publish frame of load with serial.
func (m *Master) wrapPublish(load *ordered.Map, serial int64, sigAlgo string) ([]byte, error) {
	p, err := crypt.WrapPublish(m.aes.key(), m.key, load, int(serial), sigAlgo)
	if err != nil {
		return nil, err
	}
	return protocol.Marshal(p)
}

// sendPublish puts the frame on the publish socket: one frame without
// zmq_filtering; with it, [sha1(id), frame] per targeted minion for
// id-based targets and ["broadcast", frame] otherwise.
func (m *Master) sendPublish(frame []byte, kind target.Kind, minions []string) {
	if !m.o.ZMQFiltering {
		m.pubSock.Publish(frame)
		return
	}
	if m.o.OrderMasters {
		// A syndic takes every job for its tier, whatever the target
		// (salt/transport/zeromq.py publishes by topic only without
		// order_masters).
		m.pubSock.Publish([]byte("broadcast"), frame)
		return
	}
	switch kind {
	case target.Glob, target.PCRE, target.List:
		for _, id := range minions {
			m.pubSock.Publish([]byte(transport.Topic(id)), frame)
		}
	default:
		m.pubSock.Publish([]byte("broadcast"), frame)
	}
}

// CheckMinions is CkMinions.check_minions: the accepted minions a
// target is expected to reach. Id targets match the key names; grain and
// pillar targets match the minion data cache, and a minion without
// cached data is expected anyway (Salt's greedy mode).
//
// Compound and nodegroup targets are evaluated as Salt's
// _check_compound_minions does, word by word over sets of minions, so a
// malformed expression reaches whom Salt's reaches ("( web*" the web
// minions, a dropped unknown nodegroup nobody extra); where Salt logs the
// expression as invalid and expects no minions, the error says why.
func (m *Master) CheckMinions(tgt any, kind target.Kind, delim string) ([]string, error) {
	opts := target.Options{Delimiter: delim, Nodegroups: m.o.Nodegroups}
	switch kind {
	case target.Compound, target.CompoundPillarExact, target.Nodegroup:
		if kind == target.Nodegroup {
			// _check_nodegroup_minions: the compound of nodegroup_comp,
			// as a compound's N@ word expands.
			tgt = []any{"N@" + fmt.Sprint(tgt)}
		}
		return m.checkCompound(tgt, kind == target.CompoundPillarExact, opts)
	}
	matcher, err := target.Compile(tgt, kind, opts)
	if err != nil {
		return nil, err
	}
	idOnly := kind == target.Glob || kind == target.PCRE || kind == target.List
	var out []string
	for _, id := range m.pki.ListKeys().Get(pki.Accepted) {
		mn := &target.Minion{ID: id}
		if !idOnly {
			d, ok := m.minionData(id)
			if !ok {
				out = append(out, id)
				continue
			}
			mn.Grains, mn.Pillar = d.Grains, d.Pillar
		}
		if matcher.Match(mn) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out, nil
}

// checkCompound is _check_compound_minions (target.CompoundMinions) over
// the accepted minions and the minion data cache.
func (m *Master) checkCompound(tgt any, pillarExact bool, opts target.Options) ([]string, error) {
	data := func(id string) (*target.Minion, bool) {
		d, ok := m.minionData(id)
		return &target.Minion{ID: id, Grains: d.Grains, Pillar: d.Pillar}, ok
	}
	ids, dropped, err := target.CompoundMinions(tgt, m.pki.ListKeys().Get(pki.Accepted), data, pillarExact, opts)
	for _, d := range dropped {
		m.log.Error("failed nodegroup expansion", logattr.Err, d)
	}
	if err != nil {
		// The dropped nodegroups are usually why the rest is invalid.
		return nil, fmt.Errorf("check minions: %w", errors.Join(append(dropped, err)...))
	}
	return ids, nil
}

// Accepted lists the accepted minion ids.
func (m *Master) Accepted() []string { return m.pki.ListKeys().Get(pki.Accepted) }
