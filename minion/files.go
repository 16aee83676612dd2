package minion

import (
	"context"
	"errors"
	"fmt"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
	"github.com/brinesalt/brine/state/fileclient"
	"github.com/brinesalt/brine/state/modules"
)

// ErrNotAccepted is the master not (yet) accepting this minion's key
// when Connect signs in once, as salt-call does.
var ErrNotAccepted = errors.New("minion failed to authenticate with the master, has the minion key been accepted?")

// Connect signs in to the master once, without subscribing, for
// salt-call: a pending or rejected key is ErrNotAccepted instead of a
// wait (salt/crypt.py SAuth with opts["caller"]). A master that does
// not answer within auth_tries × auth_timeout is an error naming it;
// with a master list the next master is tried, master_tries rounds of
// the list (salt/crypt.py SAuth.authenticate with local_masters).
func (m *Minion) Connect(ctx context.Context) error {
	m.authMu.Lock()
	defer m.authMu.Unlock()
	var err error
	for failed := 1; ; failed++ {
		var st *authState
		if st, err = m.connectOnce(ctx); err == nil {
			m.stateMu.Lock()
			m.authGen++
			st.generation = m.authGen
			m.st = st
			m.stateMu.Unlock()
			return nil
		}
		if errors.Is(err, ErrNotAccepted) || ctx.Err() != nil || len(m.masters) < 2 || m.roundsDone(failed) {
			return err
		}
		m.nextMaster()
	}
}

func (m *Minion) connectOnce(ctx context.Context) (*authState, error) {
	limit := m.signInTimeout()
	cctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	st, err := m.signInCurrent(cctx)
	if err != nil {
		if ctx.Err() == nil && cctx.Err() != nil {
			return nil, fmt.Errorf("connect to %s: no answer from the master within %s", m.req.Address(), limit)
		}
		if errors.Is(err, errPending) || errors.Is(err, errRejected) {
			return nil, fmt.Errorf("%w (%w)", ErrNotAccepted, err)
		}
		return nil, fmt.Errorf("connect to %s: %w", m.req.Address(), err)
	}
	return st, nil
}

// Close releases the request socket of a minion that was only
// connected (Run closes it itself).
func (m *Minion) Close() error { return m.req.Close() }

// FileClient is the master's file server for one job or salt-call run,
// caching under the minion's cachedir. ctx is the job's context.
func (m *Minion) FileClient(ctx context.Context) *fileclient.RemoteClient {
	return fileclient.NewRemote(ctx, fileRemote{m}, m.c.CacheDir)
}

// PillarSource asks the master for this minion's pillar, sending grains
// (Salt's RemotePillar).
func (m *Minion) PillarSource(grains *ordered.Map) modules.PillarSource {
	return pillarSource{m: m, grains: grains}
}

// fileRemote sends Salt's fileserver requests over the request channel
// (salt/fileclient.py RemoteClient).
type fileRemote struct{ m *Minion }

func (r fileRemote) call(ctx context.Context, cmd, path, saltenv, prefix string) (any, error) {
	load, err := protocol.FileLoad(cmd, path, saltenv, prefix)
	if err != nil {
		return nil, err
	}
	return r.m.request(ctx, load, false)
}

// FileHash implements fileclient.Remote: the reply is {hsum, hash_type},
// or "" for a file the master lacks.
func (r fileRemote) FileHash(ctx context.Context, rel, saltenv string) (string, string, error) {
	v, err := r.call(ctx, protocol.CmdFileHash, rel, saltenv, "")
	if err != nil {
		return "", "", err
	}
	mm, ok := v.(*ordered.Map)
	if !ok {
		return "", "", nil
	}
	sum, _ := mm.Value("hsum").(string)
	ht, _ := mm.Value("hash_type").(string)
	return sum, ht, nil
}

// ServeFile implements fileclient.Remote.
func (r fileRemote) ServeFile(ctx context.Context, rel, saltenv string, loc int) ([]byte, bool, error) {
	load := (&protocol.ServeFileRequest{Path: rel, Saltenv: saltenv, Loc: loc}).SaltMap()
	v, err := r.m.request(ctx, load, false)
	if err != nil {
		return nil, false, err
	}
	rep, err := protocol.ParseServeFileReply(v)
	if err != nil {
		return nil, false, err
	}
	if rep.Gzip != 0 {
		return nil, false, fmt.Errorf("serve file %s: gzip chunks were not asked for: %w", rel, protocol.ErrBadLoad)
	}
	return rep.Data, rep.Dest != "", nil
}

// FileList implements fileclient.Remote.
func (r fileRemote) FileList(ctx context.Context, saltenv, prefix string) ([]string, error) {
	v, err := r.call(ctx, protocol.CmdFileList, "", saltenv, prefix)
	return stringList(v), err
}

// Envs implements fileclient.Remote.
func (r fileRemote) Envs(ctx context.Context) ([]string, error) {
	v, err := r.call(ctx, protocol.CmdFileEnvs, "", "", "")
	return stringList(v), err
}

// stringList keeps the string items of a list reply.
func stringList(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, x := range l {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

type pillarSource struct {
	m      *Minion
	grains *ordered.Map
}

// CompilePillar implements modules.PillarSource with a _pillar request
// (the master merges override, Salt's pillar_override).
func (p pillarSource) CompilePillar(ctx context.Context, override *ordered.Map, pillarenv string) (*ordered.Map, error) {
	req := &protocol.PillarRequest{ID: p.m.id, Grains: p.grains, Saltenv: "base", PillarOverride: override, Ver: "2"}
	if pillarenv != "" {
		req.PillarEnv = pillarenv
	}
	v, err := p.m.request(ctx, req.SaltMap(), true)
	if err != nil {
		return nil, fmt.Errorf("pillar from the master: %w", err)
	}
	out, ok := v.(*ordered.Map)
	if !ok {
		return nil, fmt.Errorf("pillar from the master is %T: %w", v, protocol.ErrBadLoad)
	}
	return out, nil
}
