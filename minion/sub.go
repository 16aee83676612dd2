package minion

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/brinesalt/brine/internal/crypt"
	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
	"github.com/brinesalt/brine/internal/transport"
)

// subscribe keeps the publish connection up: connect, read publications,
// and on a lost connection wait recon_default (+ random up to recon_max)
// and sign in again, since a master that restarted has a new AES key.
func (m *Minion) subscribe(ctx context.Context) error {
	defer m.alive.close()
	signIn := false
	for ctx.Err() == nil {
		if signIn {
			if _, err := m.authenticate(ctx, m.stateGen()); err != nil {
				return err
			}
		}
		signIn = true
		err := m.readPublications(ctx)
		if ctx.Err() != nil {
			return nil
		}
		m.log.Info("publish connection lost, reconnecting", logattr.Err, err)
		delay := m.c.ReconDefault
		if m.c.ReconRandomize && m.c.ReconMax > delay {
			delay += jitter(m.c.ReconMax - delay)
		}
		if errors.Is(err, errDial) {
			// Signed in but the publish port does not connect: wait
			// before signing in again, to this master or the next.
			if err := sleep(ctx, delay); err != nil {
				return nil
			}
			delay = 0
		}
		if m.switchMaster(err) {
			// A new master: sign in to it at once and announce the
			// minion there, as the __master_disconnected handler does.
			if _, err := m.authenticate(ctx, m.stateGen()); err != nil {
				return err
			}
			m.fireStart(ctx)
			signIn = false
			continue
		}
		if m.failover() {
			// The same master again, at once: a failed sign-in moves on.
			continue
		}
		if err := sleep(ctx, delay); err != nil {
			return nil
		}
	}
	return nil
}

// errDial is a publish connection that could not be made at all.
var errDial = errors.New("publish port did not connect")

// stateGen is the current session's generation, 0 before the first.
func (m *Minion) stateGen() int {
	if st := m.state(); st != nil {
		return st.generation
	}
	return 0
}

func (m *Minion) pubAddr() string {
	port := m.c.PublishPort
	if st := m.state(); st != nil && st.pubPort != 0 {
		port = st.pubPort
	}
	addr := m.req.Address()
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	return net.JoinHostPort(host, strconv.Itoa(port))
}

func (m *Minion) readPublications(ctx context.Context) error {
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	c, err := transport.Dial(dctx, m.pubAddr(), transport.TypeSUB, []byte(m.id), 0)
	cancel()
	if err != nil {
		return fmt.Errorf("%w: %w", errDial, err)
	}
	defer c.Close()
	cctx, end := context.WithCancelCause(ctx)
	defer end(nil)
	stop := context.AfterFunc(cctx, func() { c.Close() })
	defer stop()
	var watch sync.WaitGroup
	watch.Add(1)
	go func() {
		defer watch.Done()
		m.watchMaster(cctx, end)
	}()
	defer watch.Wait()
	defer end(nil)
	topics := [][]byte{{}}
	if m.c.ZMQFiltering {
		topics = [][]byte{[]byte("broadcast"), []byte(transport.Topic(m.id))}
	}
	for _, t := range topics {
		if err := c.Subscribe(t); err != nil {
			return err
		}
	}
	// Salt's minion fires its start event after connecting the publish
	// channel; a reactor answering it with a job (highstate on start)
	// then finds the minion listening.
	m.started.Do(func() { m.fireStart(ctx) })
	for {
		frames, cmd, err := c.Recv()
		if err != nil {
			if cause := context.Cause(cctx); cause != nil && ctx.Err() == nil {
				return cause
			}
			return err
		}
		if cmd || len(frames) == 0 {
			continue
		}
		m.onPublication(ctx, frames[len(frames)-1])
	}
}

// onPublication decodes one publication (AsyncPubChannel): the load is
// decrypted with the AES key first (its HMAC proves it came from a
// holder of the session key: the master or one of its minions) and the
// target matched; only a publication this minion would act on has its
// signature (required unless sign_pub_messages is False) verified with
// the master key. A non-targeted one is dropped unverified: it runs
// nothing, and a swarm of N minions pays for one verification per
// publication instead of N (docs/SECURITY.md). A load that does not
// decrypt means the key was rotated, so the minion signs in again and
// retries once.
func (m *Minion) onPublication(ctx context.Context, payload []byte) {
	p, err := protocol.DecodePublish(payload)
	if err != nil {
		m.log.Warn("undecodable publication dropped", logattr.Err, err)
		return
	}
	st := m.state()
	requireSig := m.c.SignPubMessages || len(p.Sig) > 0
	v, err := st.aes.Loads(p.Load, "")
	if err != nil && errors.Is(err, crypt.ErrAuthentication) && crypt.VerifyPublish(st.masterKey, p, requireSig) == nil {
		// Signed by our master (or unsigned, where that is allowed) but
		// not decryptable: the AES key rotated.
		if d := m.c.RandomReauthDelay; d > 0 {
			_ = sleep(ctx, jitter(min(d, 2*time.Second)))
		}
		if st, err = m.authenticate(ctx, st.generation); err != nil {
			return
		}
		v, err = st.aes.Loads(p.Load, "")
	}
	if err != nil {
		m.log.Warn("publication refused", logattr.Err, err)
		return
	}
	load, ok := v.(*ordered.Map)
	if !ok {
		return
	}
	if m.o.Relay != nil {
		// A relay (the syndic) acts on every publication.
		if m.refused(st, p, requireSig) {
			return
		}
		m.o.Relay(ctx, load)
		return
	}
	job, err := protocol.ParseJob(load)
	if err != nil {
		m.log.Warn("bad publication load", logattr.Err, err)
		return
	}
	if !m.targeted(job) || m.refused(st, p, requireSig) {
		return
	}
	m.jobs.Add(1)
	go func() {
		defer m.jobs.Done()
		m.runJob(ctx, job)
	}()
}

// refused reports (and logs) a publication whose signature does not
// pass crypt.VerifyPublish with the master key of the session that
// decrypted it.
func (m *Minion) refused(st *authState, p *protocol.Publish, requireSig bool) bool {
	err := crypt.VerifyPublish(st.masterKey, p, requireSig)
	if err != nil {
		m.log.Warn("publication refused", logattr.Err, err)
	}
	return err != nil
}
