package relay

import "time"

// schedule gives every host with room the chunks it can get next: from
// the least busy host holding a verified copy, else from the controller
// when no host of the run holds or is receiving one this host can use.
// c.mu is held.
func (c *Coordinator) schedule() {
	if c.closed {
		return
	}
	for _, m := range c.members {
		if m.alive && m.ready && !m.complete && len(m.pending) < c.opts.MaxPending {
			c.fill(m)
		}
	}
}

func (c *Coordinator) fill(m *member) {
	var fromCtrl []string
	for _, h := range m.want {
		if len(m.pending) >= c.opts.MaxPending {
			return
		}
		if m.have[h] {
			continue
		}
		if _, ok := m.pending[h]; ok {
			continue
		}
		cs := c.chunks[h]
		if src := c.bestSource(m, cs); src != nil {
			m.pending[h] = assignment{src: src, since: time.Now()}
			src.serving++
			cs.on[m] = true
			m.sendq <- "F " + h + " " + src.addr
			continue
		}
		if !c.anySource(m, cs) {
			fromCtrl = append(fromCtrl, h)
		}
	}
	for _, h := range fromCtrl {
		if len(m.pending) >= c.opts.MaxPending || c.ctrl >= c.opts.ControllerStreams {
			return
		}
		m.pending[h] = assignment{since: time.Now()}
		c.ctrl++
		c.chunks[h].on[m] = true
		m.sendq <- "C " + h
	}
}

// usable reports whether src can serve m now or once it holds a chunk.
// A host not yet heard from counts: its first event says whether it
// listens, and sending the controller's copy meanwhile would double it.
func usable(m, src *member) bool {
	return src != m && src.alive && (!src.heard || src.listening) && !src.bad && !src.deadSrc && !m.unreach[src]
}

// bestSource is the least busy usable host holding a verified copy.
func (c *Coordinator) bestSource(m *member, cs *chunkState) *member {
	var best *member
	for src := range cs.on {
		if !src.have[cs.hash] || !src.listening || !usable(m, src) || src.serving >= c.opts.MaxServe {
			continue
		}
		if best == nil || src.serving < best.serving {
			best = src
			if best.serving == 0 {
				break
			}
		}
	}
	return best
}

// anySource reports whether some host of the run holds, or is receiving,
// a copy m could fetch.
func (c *Coordinator) anySource(m *member, cs *chunkState) bool {
	for src := range cs.on {
		if usable(m, src) {
			return true
		}
	}
	return false
}
