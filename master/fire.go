package master

import (
	"context"
	"fmt"

	"github.com/brinesalt/brine/internal/ordered"
)

// fireLocal is a local client firing an event on the master bus
// (SaltEvent.fire_event on the master's event socket, which salt-api's
// webhook uses): {"tag", "data"}, answered {"return": true}. Only the
// socket's owner can reach it, as only root can write to Salt's
// master_event_pub.ipc.
func (m *Master) fireLocal(req *ordered.Map) (*ordered.Map, error) {
	tag, _ := req.Value("tag").(string)
	if tag == "" {
		return nil, fmt.Errorf("fire_event: empty tag")
	}
	data, _ := req.Value("data").(*ordered.Map)
	m.bus.Fire(tag, data)
	return ordered.FromPairs("return", true), nil
}

// FireEvent fires an event with tag and data on the master's bus.
func (c *Client) FireEvent(ctx context.Context, tag string, data *ordered.Map) error {
	if data == nil {
		data = ordered.New()
	}
	_, err := c.call(ctx, ordered.FromPairs("cmd", "fire_event", "tag", tag, "data", data))
	return err
}
