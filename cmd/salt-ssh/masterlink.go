package main

import (
	"context"
	"fmt"

	"github.com/brinesalt/brine/internal/config"
	"github.com/brinesalt/brine/master"
	"github.com/brinesalt/brine/sshexec/wrapper"
)

// masterLink connects minion.bootstrap to the master this configuration
// describes, through the master's local socket, as salt does.
func masterLink(cfg *config.Master) (*wrapper.MasterLink, error) {
	o, err := master.OptionsFromConfig(cfg)
	if err != nil {
		return nil, err
	}
	sock := o.LocalSocket()
	return &wrapper.MasterLink{
		PKIDir: o.PKIDir, KeySize: o.KeySize, RetPort: o.RetPort, PublishPort: o.PublishPort, Socket: sock,
		Events: func(ctx context.Context) (<-chan wrapper.Event, error) { return masterEvents(ctx, sock) },
		Ping: func(ctx context.Context, id string) (string, error) {
			c, err := master.Dial(ctx, sock)
			if err != nil {
				return "", err
			}
			defer c.Close()
			jid, _, err := c.Publish(ctx, master.PublishRequest{Tgt: []any{id}, TgtType: "list", Fun: "test.ping", User: "root"})
			return jid, err
		},
	}, nil
}

// masterEvents opens the master's event stream on its local socket and
// hands each event on until ctx ends or the stream closes.
func masterEvents(ctx context.Context, sock string) (<-chan wrapper.Event, error) {
	c, err := master.Dial(ctx, sock)
	if err != nil {
		return nil, fmt.Errorf("is salt-master running with this configuration? %w", err)
	}
	in, err := c.Events(ctx)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("watch the master's events: %w", err)
	}
	out := make(chan wrapper.Event)
	go func() {
		defer close(out)
		defer c.Close()
		for {
			var e master.Event
			var ok bool
			select {
			case e, ok = <-in:
				if !ok {
					return
				}
			case <-ctx.Done():
				return
			}
			select {
			case out <- wrapper.Event{Tag: e.Tag, Data: e.Data}:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}
