package minion

import (
	"context"
	"errors"
	"net"
	"strconv"
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
	first := true
	for ctx.Err() == nil {
		if !first {
			st := m.state()
			gen := 0
			if st != nil {
				gen = st.generation
			}
			if _, err := m.authenticate(ctx, gen); err != nil {
				return err
			}
		}
		first = false
		err := m.readPublications(ctx)
		if ctx.Err() != nil {
			return nil
		}
		m.log.Info("publish connection lost, reconnecting", logattr.Err, err)
		delay := m.c.ReconDefault
		if m.c.ReconRandomize && m.c.ReconMax > delay {
			delay += jitter(m.c.ReconMax - delay)
		}
		if err := sleep(ctx, delay); err != nil {
			return nil
		}
	}
	return nil
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
		return err
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
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
			return err
		}
		if cmd || len(frames) == 0 {
			continue
		}
		m.onPublication(ctx, frames[len(frames)-1])
	}
}

// onPublication decodes one publication (AsyncPubChannel): the
// signature is verified with the master key, the load decrypted with the
// AES key; a load that does not decrypt means the key was rotated, so
// the minion signs in again and retries once.
func (m *Minion) onPublication(ctx context.Context, payload []byte) {
	p, err := protocol.DecodePublish(payload)
	if err != nil {
		m.log.Warn("undecodable publication dropped", logattr.Err, err)
		return
	}
	st := m.state()
	v, err := crypt.OpenPublish(st.aes, st.masterKey, p, true)
	if err != nil && errors.Is(err, crypt.ErrAuthentication) && p.Sig != nil && crypt.Verify(st.masterKey, p.Load, p.Sig, p.SigAlgo) == nil {
		// Signed by our master but not decryptable: the AES key rotated.
		if d := m.c.RandomReauthDelay; d > 0 {
			_ = sleep(ctx, jitter(min(d, 2*time.Second)))
		}
		if st, err = m.authenticate(ctx, st.generation); err != nil {
			return
		}
		v, err = crypt.OpenPublish(st.aes, st.masterKey, p, true)
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
		m.o.Relay(ctx, load)
		return
	}
	job, err := protocol.ParseJob(load)
	if err != nil {
		m.log.Warn("bad publication load", logattr.Err, err)
		return
	}
	if !m.targeted(job) {
		return
	}
	m.jobs.Add(1)
	go func() {
		defer m.jobs.Done()
		m.runJob(ctx, job)
	}()
}
