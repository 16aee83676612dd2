// Package jid makes Salt job ids: the local time as %Y%m%d%H%M%S%f, 20
// digits (salt/utils/jid.py gen_jid), made unique within this process by
// stepping a microsecond forward when two would collide, as Salt does.
package jid

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"time"
)

var (
	mu   sync.Mutex
	last time.Time
)

// New returns a JID for t, later than any JID this process made before.
func New(t time.Time) string {
	mu.Lock()
	defer mu.Unlock()
	t = t.Truncate(time.Microsecond)
	if !t.After(last) {
		t = last.Add(time.Microsecond)
	}
	last = t
	return Format(t)
}

// Format renders t in Salt's JID layout.
func Format(t time.Time) string {
	return fmt.Sprintf("%s%06d", t.Format("20060102150405"), t.Nanosecond()/1000)
}

// RandomHex returns 2n random hex digits (Salt's uuid4().hex[:n*2]).
func RandomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on Linux
	return hex.EncodeToString(b)
}
