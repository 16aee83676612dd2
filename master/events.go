package master

import (
	"sync"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
)

// Event is one event on the master bus.
type Event struct {
	Tag  string
	Data *ordered.Map
}

// Bus is the master event bus (salt/utils/event.py MasterEvent): every
// subscriber gets each event fired after it subscribed. A subscriber
// that falls 10,000 events behind loses events rather than stalling
// the master.
type Bus struct {
	mu   sync.Mutex
	subs map[chan Event]struct{}
}

// NewBus returns an empty bus.
func NewBus() *Bus { return &Bus{subs: map[chan Event]struct{}{}} }

// Subscribe returns a channel of events and the function that ends the
// subscription.
func (b *Bus) Subscribe() (<-chan Event, func()) {
	ch := make(chan Event, 10000)
	b.mu.Lock()
	b.subs[ch] = struct{}{}
	b.mu.Unlock()
	return ch, func() {
		b.mu.Lock()
		delete(b.subs, ch)
		b.mu.Unlock()
	}
}

// Fire sends an event, adding _stamp as Salt does.
func (b *Bus) Fire(tag string, data *ordered.Map) {
	b.fireStamped(tag, data, protocol.EventStamp(time.Now()))
}

// fireStamped is Fire with the _stamp given, for callers that answer
// the data they fired, stamp included, as Salt's fire_event leaves it.
func (b *Bus) fireStamped(tag string, data *ordered.Map, stamp string) {
	if data == nil {
		data = ordered.New()
	} else {
		data = data.Copy()
	}
	data.Set("_stamp", stamp)
	ev := Event{Tag: tag, Data: data}
	b.mu.Lock()
	defer b.mu.Unlock()
	for ch := range b.subs {
		select {
		case ch <- ev:
		default:
		}
	}
}
