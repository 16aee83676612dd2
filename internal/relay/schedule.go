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
	if len(fromCtrl) > 0 && c.inventoryPending() {
		c.recheckLater()
		return
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

// readyGrace is how long the controller holds back its own copies while
// a host that has joined has not yet reported the chunks it holds: a
// rerun's hosts report what they verified last time, and a chunk sent
// from the controller before that report would cross the uplink again.
// A host that never reports stops holding the others back after it.
const readyGrace = 3 * time.Second

// inventoryPending reports whether a live host joined less than
// readyGrace ago and has not said what it holds; c.mu is held.
func (c *Coordinator) inventoryPending() bool {
	for _, m := range c.members {
		if m.alive && !m.ready && time.Since(m.joined) < readyGrace {
			return true
		}
	}
	return false
}

// recheckLater runs schedule again once readyGrace has passed, so a host
// that never reports does not leave the others waiting on the next
// event; c.mu is held.
func (c *Coordinator) recheckLater() {
	if c.recheck != nil {
		return
	}
	c.recheck = time.AfterFunc(readyGrace, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.recheck = nil
		c.schedule()
	})
}
