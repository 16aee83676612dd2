package sshrun

import (
	"fmt"

	"github.com/brinesalt/brine/sshexec"
)

// relayOptions reads --relay and the master's ssh_relay, ssh_relay_port
// and ssh_relay_transport (Brine's own options, docs/RELAY.md): nil when
// the relay is off. tcp is the only transport: hosts that cannot reach
// each other fall back to the controller, over SSH, by themselves.
func (sr *Run) relayOptions() (*sshexec.RelayOptions, error) {
	on, _ := sr.cfg.Raw.Value("ssh_relay").(bool)
	if !sr.s.Relay && !on {
		return nil, nil
	}
	o := &sshexec.RelayOptions{}
	switch v := sr.cfg.Raw.Value("ssh_relay_port").(type) {
	case nil:
	case int:
		if v < 0 || v > 65535 {
			return nil, fmt.Errorf("ssh_relay_port %d: not a TCP port", v)
		}
		o.Port = v
	default:
		return nil, fmt.Errorf("ssh_relay_port %v: not a TCP port", v)
	}
	if t, ok := sr.cfg.Raw.Value("ssh_relay_transport").(string); ok && t != "tcp" {
		return nil, fmt.Errorf("ssh_relay_transport %q is not supported: only tcp", t)
	}
	return o, nil
}
