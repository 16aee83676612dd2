package beacons

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
)

func init() {
	Register("service", func() Beacon { return &serviceBeacon{last: map[string]*serviceLast{}} })
	Register("status", func() Beacon { return statusBeacon{} })
}

// errNoModules is a beacon that needs execution functions run where
// there are none.
var errNoModules = errors.New("execution modules are not available to beacons here")

type serviceLast struct {
	running bool
	since   time.Time
	pending bool
}

// serviceBeacon is salt/beacons/service.py; last is its LAST_STATUS.
type serviceBeacon struct{ last map[string]*serviceLast }

func (*serviceBeacon) Close() {}

func (*serviceBeacon) Validate(config any) string {
	list, ok := isList(config)
	if !ok {
		return "Configuration for service beacon must be a list."
	}
	c := ListToDict(list)
	if !c.Has("services") {
		return "Configuration for service beacon requires services."
	}
	svcs, ok := c.Value("services").(*ordered.Map)
	if !ok {
		return "Services configuration item for service beacon must be a dictionary."
	}
	msg := ""
	svcs.Range(func(_, v any) bool {
		if _, isMap := v.(*ordered.Map); !isMap {
			msg = "Configuration for service beacon must be a list of dictionaries."
		}
		return msg == ""
	})
	return msg
}

func (b *serviceBeacon) Beacon(ctx context.Context, env *Env, config []any) ([]*ordered.Map, error) {
	if env.Call == nil {
		return nil, errNoModules
	}
	svcs, _ := ListToDict(config).Value("services").(*ordered.Map)
	var out []*ordered.Map
	now := time.Now()
	for _, name := range svcs.StringKeys() {
		sc, _ := svcs.Value(name).(*ordered.Map)
		v, err := env.Call(ctx, "service.status", name)
		if err != nil {
			return out, fmt.Errorf("service.status %s: %w", name, err)
		}
		running := py.Truthy(v)
		st := ordered.FromPairs("running", running)
		if f, ok := sc.Value("uncleanshutdown").(string); ok && !running {
			_, err := os.Stat(f)
			st.Set("uncleanshutdown", err == nil)
		}
		ev := ordered.FromPairs(name, st, "service_name", name, "tag", name)
		if b.emit(name, sc, running, now) {
			out = append(out, ev)
		}
	}
	return out, nil
}

// emit is the onchangeonly/delay/emitatstartup logic of the service
// beacon.
func (b *serviceBeacon) emit(name string, sc *ordered.Map, running bool, now time.Time) bool {
	if v, _ := sc.Value("onchangeonly").(bool); !v {
		return true
	}
	delay, _ := number(sc.Value("delay"))
	emitAtStartup := true
	if v, ok := sc.Value("emitatstartup").(bool); ok {
		emitAtStartup = v
	}
	last, seen := b.last[name]
	send := false
	if !seen {
		last = &serviceLast{running: running}
		b.last[name] = last
		if !emitAtStartup {
			return false
		}
		if delay > 0 {
			last.since, last.pending = now, true
		} else {
			send = true
		}
	}
	if last.running != running {
		*last = serviceLast{running: running}
		if delay > 0 {
			last.since, last.pending = now, true
		} else {
			send = true
		}
	}
	if last.pending && now.Sub(last.since).Round(time.Second).Seconds() > delay {
		last.pending = false
		send = true
	}
	return send
}

// statusBeacon is salt/beacons/status.py: status.<func> for each item,
// all of it or the listed keys (or indexes), in one event tagged with
// the UTC time.
type statusBeacon struct{}

func (statusBeacon) Close() {}

func (statusBeacon) Validate(config any) string {
	if _, ok := isList(config); !ok {
		return "Configuration for status beacon must be a list."
	}
	return ""
}

func (statusBeacon) Beacon(ctx context.Context, env *Env, config []any) ([]*ordered.Map, error) {
	if env.Call == nil {
		return nil, errNoModules
	}
	config = removeHidden(config)
	if len(config) == 0 {
		all := []any{"all"}
		config = []any{ordered.FromPairs("loadavg", all, "cpustats", all, "meminfo", all, "vmstats", all, "time", all)}
	}
	ret := ordered.New()
	for _, entry := range config {
		m, ok := entry.(*ordered.Map)
		if !ok {
			continue
		}
		for _, fn := range m.StringKeys() {
			ret.Set(fn, statusItems(ctx, env, fn, m.Value(fn)))
		}
	}
	ctime := time.Now().UTC().Format("2006-01-02T15:04:05.000000")
	return []*ordered.Map{ordered.FromPairs("tag", ctime, "data", ret)}, nil
}

// statusItems is one function's part; a function that fails leaves {}
// as Salt does for a CommandExecutionError (and Brine for a status
// function it lacks).
func statusItems(ctx context.Context, env *Env, fn string, want any) any {
	data, err := env.Call(ctx, "status."+fn)
	if err != nil {
		return ordered.New()
	}
	items, ok := want.([]any)
	if !ok {
		items = []any{want}
	}
	var out any = ordered.New()
	for _, item := range items {
		if item == "all" {
			out = data
			continue
		}
		sub, isMap := out.(*ordered.Map)
		if !isMap {
			continue
		}
		if v, ok := lookupItem(data, item); ok {
			sub.Set(item, v)
		} else {
			out = fmt.Sprintf("Status beacon is incorrectly configured: %s", pyRepr(item))
		}
	}
	return out
}

func lookupItem(data, item any) (any, bool) {
	switch d := data.(type) {
	case *ordered.Map:
		if v, ok := d.Get(item); ok {
			return v, true
		}
		if s, ok := item.(string); ok {
			if n, err := strconv.Atoi(s); err == nil {
				return d.Get(n)
			}
		}
	case []any:
		n, ok := item.(int)
		if !ok {
			s, _ := item.(string)
			var err error
			if n, err = strconv.Atoi(s); err != nil {
				return nil, false
			}
		}
		if n >= 0 && n < len(d) {
			return d[n], true
		}
	}
	return nil, false
}

// pyRepr is how a KeyError prints its key: strings quoted.
func pyRepr(v any) string {
	if s, ok := v.(string); ok {
		return "'" + s + "'"
	}
	return fmt.Sprint(v)
}
