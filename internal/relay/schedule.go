package relay

import "time"

// The scheduler is event driven, so that a run's cost per host stays flat
// as the number of hosts grows: an event looks only at the hosts it can
// help, never at every host of the run (a sweep over all hosts per event
// is O(N²) over a run: at 1,000 hosts × 20 chunks, 20,000 events × 1,000
// hosts × 20 chunks).
//
//   - A host that gained room (a chunk arrived or failed, it reported
//     ready) is filled at once.
//   - A host that wants a chunk whose holders are all busy waits on that
//     chunk (chunkState.waiters); a serve slot that frees up, or a new
//     holder, is offered to the chunk's waiters in turn.
//   - A host that needs the controller's copy while its streams are all
//     busy waits in Coordinator.ctrlWait, fed as streams free up.
//   - Rare events (a host leaving, a fetch timing out, the ready grace
//     ending) sweep every host once: scheduleAll.

// maxScan bounds the holders bestSource looks at for one chunk: the
// least busy of a few is as good as the least busy of all when most are
// free, and when most are busy the chunk waits for an offer anyway.
const maxScan = 64

// markDirty queues m to be filled by the next schedule; c.mu is held.
func (c *Coordinator) markDirty(m *member) {
	if !m.dirty {
		m.dirty = true
		c.dirty = append(c.dirty, m)
	}
}

// hungry reports whether m can take another assignment.
func (c *Coordinator) hungry(m *member) bool {
	return m.alive && m.ready && !m.complete && len(m.pending) < c.opts.MaxPending
}

// schedule acts on what the events since the last call changed: hosts
// that left or failed (a sweep), new holders and freed serve slots
// (offered to the waiters), a freed controller stream, and hosts that
// gained room. c.mu is held.
func (c *Coordinator) schedule() {
	if c.closed {
		return
	}
	if c.sweep {
		c.sweep = false
		for _, m := range c.members {
			c.markDirty(m)
		}
	}
	for len(c.newHolders) > 0 {
		nh := c.newHolders[0]
		c.newHolders = c.newHolders[1:]
		if usableSource(nh.src) {
			c.offer(nh.cs, nh.src)
		}
	}
	for len(c.freedSrcs) > 0 {
		src := c.freedSrcs[0]
		c.freedSrcs = c.freedSrcs[1:]
		c.freed(src)
	}
	if c.ctrlFree {
		c.ctrlFree = false
		c.ctrlFreed()
	}
	for len(c.dirty) > 0 {
		m := c.dirty[len(c.dirty)-1]
		c.dirty = c.dirty[:len(c.dirty)-1]
		m.dirty = false
		if !c.closed && c.hungry(m) {
			c.fill(m)
		}
	}
}

// scheduleAll fills every host; c.mu is held.
func (c *Coordinator) scheduleAll() {
	for _, m := range c.members {
		c.markDirty(m)
	}
	c.schedule()
}

// fill gives m the chunks it can get next: from the least busy host
// holding a verified copy, else from the controller when no host of the
// run holds or is receiving one m can use. c.mu is held.
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
			c.assign(m, cs, src)
			continue
		}
		if c.anySource(m, cs) {
			cs.wait(m)
		} else {
			fromCtrl = append(fromCtrl, h)
		}
	}
	if len(fromCtrl) == 0 {
		return
	}
	if c.inventoryPending() {
		c.waitCtrl(m)
		c.recheckLater()
		return
	}
	for _, h := range fromCtrl {
		if len(m.pending) >= c.opts.MaxPending {
			return
		}
		if c.ctrl >= c.opts.ControllerStreams {
			c.waitCtrl(m)
			return
		}
		m.pending[h] = assignment{since: time.Now()}
		c.ctrl++
		c.chunks[h].on[m] = true
		m.sendq <- "C " + h
	}
}

// assign has m fetch cs's chunk from src; c.mu is held.
func (c *Coordinator) assign(m *member, cs *chunkState, src *member) {
	m.pending[cs.hash] = assignment{src: src, since: time.Now()}
	src.serving++
	cs.on[m] = true
	m.sendq <- "F " + cs.hash + " " + src.addr
}

// wait queues m for the next free holder of cs's chunk.
func (cs *chunkState) wait(m *member) {
	if !cs.waiting[m] {
		cs.waiting[m] = true
		cs.waiters = append(cs.waiters, m)
	}
}

// waitCtrl queues m for the next free controller stream; c.mu is held.
func (c *Coordinator) waitCtrl(m *member) {
	if !m.ctrlWaiting {
		m.ctrlWaiting = true
		c.ctrlWait = append(c.ctrlWait, m)
	}
}

// offer gives src's free serve slots to the hosts waiting for cs's
// chunk, in the order they began to wait; each looks once (a host that
// cannot use src waits again, behind the others). c.mu is held.
func (c *Coordinator) offer(cs *chunkState, src *member) {
	for n := len(cs.waiters); n > 0 && len(cs.waiters) > 0 && src.serving < c.opts.MaxServe; n-- {
		m := cs.waiters[0]
		cs.waiters = cs.waiters[1:]
		delete(cs.waiting, m)
		if c.hungry(m) && !m.have[cs.hash] {
			c.fill(m)
		}
	}
}

// freed offers a serve slot src just gave back to the hosts waiting for
// any chunk it holds; c.mu is held.
func (c *Coordinator) freed(src *member) {
	if !usableSource(src) {
		return
	}
	for h := range src.have {
		if src.serving >= c.opts.MaxServe {
			return
		}
		c.offer(c.chunks[h], src)
	}
}

// ctrlFreed gives free controller streams to the hosts waiting for one;
// c.mu is held.
func (c *Coordinator) ctrlFreed() {
	for n := len(c.ctrlWait); n > 0 && len(c.ctrlWait) > 0 && c.ctrl < c.opts.ControllerStreams; n-- {
		m := c.ctrlWait[0]
		c.ctrlWait = c.ctrlWait[1:]
		m.ctrlWaiting = false
		if c.hungry(m) {
			c.fill(m)
		}
	}
}

// usableSource reports whether src may serve anyone at all.
func usableSource(src *member) bool {
	return src.alive && src.listening && !src.bad && !src.deadSrc
}

// usable reports whether src can serve m now or once it holds a chunk.
// A host not yet heard from counts: its first event says whether it
// listens, and sending the controller's copy meanwhile would double it.
func usable(m, src *member) bool {
	return src != m && src.alive && (!src.heard || src.listening) && !src.bad && !src.deadSrc && !m.unreach[src]
}

// bestSource is the least busy usable host holding a verified copy,
// among the first maxScan usable holders from a point that moves on at
// every call, so the load spreads over all of them.
func (c *Coordinator) bestSource(m *member, cs *chunkState) *member {
	var best *member
	n := len(cs.holders)
	if n == 0 {
		return nil
	}
	start := cs.next % n
	cs.next++
	seen := 0
	for i := range n {
		src := cs.holders[(start+i)%n]
		if !usable(m, src) || src.serving >= c.opts.MaxServe {
			continue
		}
		if best == nil || src.serving < best.serving {
			best = src
			if best.serving == 0 {
				break
			}
		}
		if seen++; seen >= maxScan {
			break
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
// readyGrace ago and has not said what it holds; c.mu is held. Hosts
// are in the order they joined, so the look goes back only over those
// that joined within the grace.
func (c *Coordinator) inventoryPending() bool {
	if c.unready == 0 {
		return false
	}
	for i := len(c.members) - 1; i >= 0; i-- {
		m := c.members[i]
		if time.Since(m.joined) >= readyGrace {
			return false
		}
		if m.alive && !m.ready {
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
		c.scheduleAll()
	})
}
