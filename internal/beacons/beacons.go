package beacons

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/internal/saltyaml"
)

// Provider is a running minion with beacons: the beacons execution
// module finds them through modules.Env.Minion.
type Provider interface {
	Beacons() *Manager
}

// Options configure a Manager.
type Options struct {
	// Beacons is the `beacons:` option (copied); nil is none.
	Beacons *ordered.Map
	// LoopInterval is how often beacons are processed (loop_interval);
	// 0 means 1 s.
	LoopInterval time.Duration
	Env          *Env
	// Fire sends the events of one pass to the master (a
	// _minion_event with events); each is {"tag", "data",
	// "beacon_name"} (or "error" for a failed beacon).
	Fire func(ctx context.Context, events []any)
	// StateRunning reports whether a state.* job runs now, for
	// disable_during_state_run.
	StateRunning func() bool
	Log          *slog.Logger
}

// Manager holds the beacons and their module instances.
type Manager struct {
	o      Options
	log    *slog.Logger
	mu     sync.Mutex
	conf   *ordered.Map
	pillar *ordered.Map
	inst   map[string]instance
	// counters is Beacon.interval_map.
	counters map[string]int
	// reported is the last complaint about each beacon, so a bad one is
	// reported once and not every loop_interval.
	reported map[string]string
}

type instance struct {
	module string
	b      Beacon
}

// New returns a manager over o.Beacons.
func New(o Options) *Manager {
	if o.LoopInterval <= 0 {
		o.LoopInterval = time.Second
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Env == nil {
		o.Env = &Env{}
	}
	m := &Manager{o: o, log: o.Log, conf: ordered.New(), pillar: ordered.New(),
		inst: map[string]instance{}, counters: map[string]int{}, reported: map[string]string{}}
	if o.Beacons != nil {
		m.conf = ordered.DeepCopy(o.Beacons).(*ordered.Map)
	}
	return m
}

// SetPillar replaces the pillar's beacons; a value that is not a
// mapping is refused as _get_beacons raises "Beacons must be of type
// dict.".
func (m *Manager) SetPillar(v any) error {
	p, ok := v.(*ordered.Map)
	if v != nil && !ok {
		//lint:ignore ST1005 Salt's exact message
		return errors.New("Beacons must be of type dict.")
	}
	if p == nil {
		p = ordered.New()
	}
	m.mu.Lock()
	m.pillar = ordered.DeepCopy(p).(*ordered.Map)
	m.mu.Unlock()
	return nil
}

// Where selects part of the beacons as list_beacons does.
type Where int

// The parts.
const (
	All Where = iota
	Opts
	Pillar
)

// List is _get_beacons: the pillar's overlaid by the configuration's.
func (m *Manager) List(where Where) *ordered.Map {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.merged(where)
}

func (m *Manager) merged(where Where) *ordered.Map {
	out := ordered.New()
	for _, src := range []struct {
		m    *ordered.Map
		skip Where
	}{{m.pillar, Opts}, {m.conf, Pillar}} {
		if where == src.skip {
			continue
		}
		src.m.Range(func(k, v any) bool {
			out.Set(k, ordered.DeepCopy(v))
			return true
		})
	}
	return out
}

// Loop processes the beacons every loop_interval until ctx ends, then
// closes them.
func (m *Manager) Loop(ctx context.Context) {
	t := time.NewTicker(m.o.LoopInterval)
	defer t.Stop()
	defer m.closeAll()
	for {
		if evs := m.Process(ctx); len(evs) > 0 && m.o.Fire != nil {
			m.o.Fire(ctx, evs)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (m *Manager) closeAll() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for name, in := range m.inst {
		in.b.Close()
		delete(m.inst, name)
	}
}

// drop closes and forgets a beacon's instance (after a change to it).
func (m *Manager) drop(name string) {
	if in, ok := m.inst[name]; ok {
		in.b.Close()
		delete(m.inst, name)
	}
	delete(m.counters, name)
	delete(m.reported, name)
}

// report logs msg for beacon name unless it was the last thing said.
func (m *Manager) report(name, msg string) {
	if m.reported[name] == msg {
		return
	}
	m.reported[name] = msg
	m.log.Error(msg)
}

// asConfigDict is the beacon's config as one mapping (a list merged, a
// mapping as it is), or nil.
func asConfigDict(v any) *ordered.Map {
	switch x := v.(type) {
	case []any:
		return ListToDict(x)
	case *ordered.Map:
		return x
	}
	return nil
}

// trim removes the items carrying key from a list config (_trim_config).
func trim(config []any, key string) []any {
	out := config[:0:0]
	for _, item := range config {
		if mm, ok := item.(*ordered.Map); ok && mm.Has(key) {
			continue
		}
		out = append(out, item)
	}
	return out
}

// Process is Beacon.process: one pass over the beacons, returning the
// events to fire.
func (m *Manager) Process(ctx context.Context) []any {
	m.mu.Lock()
	defer m.mu.Unlock()
	config := m.merged(All)
	if v, ok := config.Get("enabled"); ok && !py.Truthy(v) {
		return nil
	}
	var out []any
	config.Range(func(k, v any) bool {
		name := ordered.KeyString(k)
		if name != "enabled" {
			out = append(out, m.processOne(ctx, name, v)...)
		}
		return true
	})
	return out
}

func (m *Manager) processOne(ctx context.Context, name string, raw any) []any {
	cur := asConfigDict(raw)
	if cur == nil {
		m.report(name, fmt.Sprintf("Configuration for beacon %s must be a list.", name))
		return nil
	}
	if v, ok := cur.Get("enabled"); ok && !py.Truthy(v) {
		return nil
	}
	module := name
	if s, ok := cur.Value("beacon_module").(string); ok && s != "" {
		module = s
	}
	in, err := m.instance(name, module)
	if err != nil {
		m.report(name, err.Error())
		return nil
	}
	if msg := in.b.Validate(raw); msg != "" {
		m.report(name, fmt.Sprintf("Beacon %s configuration invalid, not running.\n%s", name, msg))
		return nil
	}
	delete(m.reported, name)
	list, _ := raw.([]any)
	list = append(trim(list, "enabled"), ordered.FromPairs("_beacon_name", name))
	if iv, ok := number(cur.Value("interval")); ok && iv > 0 {
		list = trim(list, "interval")
		if !m.intervalDue(name, iv) {
			return nil
		}
	}
	if py.Truthy(cur.Value("disable_during_state_run")) {
		list = trim(list, "disable_during_state_run")
		if m.o.StateRunning != nil && m.o.StateRunning() {
			m.log.Info(fmt.Sprintf("Closing beacon %s. State run in progress.", name))
			in.b.Close()
			return nil
		}
	}
	tag := fmt.Sprintf("salt/beacon/%s/%s/", m.o.Env.ID, name)
	evs, err := in.b.Beacon(ctx, m.o.Env, list)
	if err != nil {
		m.log.Error(fmt.Sprintf("Unable to start %s beacon, %s", name, err))
		return []any{ordered.FromPairs("tag", tag, "error", err.Error(), "data", ordered.New(), "beacon_name", module)}
	}
	out := make([]any, 0, len(evs))
	for _, data := range evs {
		t := tag
		if s, ok := data.Get("tag"); ok {
			t += ordered.KeyString(s)
			data.Delete("tag")
		}
		if !data.Has("id") {
			data.Set("id", m.o.Env.ID)
		}
		out = append(out, ordered.FromPairs("tag", t, "data", data, "beacon_name", module))
	}
	if py.Truthy(cur.Value("run_once")) {
		m.setBeaconEnabledLocked(name, false)
	}
	return out
}

// instance is the module instance of beacon name, made on first use.
func (m *Manager) instance(name, module string) (instance, error) {
	if in, ok := m.inst[name]; ok && in.module == module {
		return in, nil
	}
	if in, ok := m.inst[name]; ok {
		in.b.Close()
		delete(m.inst, name)
	}
	mk, ok := lookup(module)
	if !ok {
		//lint:ignore ST1005 Salt's exact message
		return instance{}, fmt.Errorf("Unable to process beacon %s", name)
	}
	in := instance{module: module, b: mk()}
	m.inst[name] = in
	return in, nil
}

// intervalDue is _process_interval: true once every interval seconds
// counted in loop_interval passes.
func (m *Manager) intervalDue(name string, interval float64) bool {
	n, seen := m.counters[name]
	if !seen {
		m.counters[name] = 1
		return false
	}
	if float64(n)*m.o.LoopInterval.Seconds() >= interval {
		m.counters[name] = 1
		return true
	}
	m.counters[name] = n + 1
	return false
}

// Validate is validate_beacon: the module's verdict on data for beacon
// name.
func (m *Manager) Validate(name string, data any) (bool, string) {
	module := name
	if cur := asConfigDict(data); cur != nil {
		if s, ok := cur.Value("beacon_module").(string); ok && s != "" {
			module = s
		}
	}
	mk, ok := lookup(module)
	if !ok {
		return true, fmt.Sprintf("Beacon %s does not have a validate function, skipping validation.", module)
	}
	b := mk()
	defer b.Close()
	if msg := b.Validate(data); msg != "" {
		return false, msg
	}
	return true, "Valid beacon configuration"
}

// Add is add_beacon; complete false means the name is the pillar's.
func (m *Manager) Add(name string, data any) (bool, string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.pillar.Has(name) {
		return false, fmt.Sprintf("Cannot update beacon item %s, because it is configured in pillar.", name)
	}
	comment := fmt.Sprintf("Added new beacon item: %s", name)
	if m.conf.Has(name) {
		comment = fmt.Sprintf("Updating settings for beacon item: %s", name)
	}
	m.conf.Set(name, ordered.DeepCopy(data))
	m.drop(name)
	return true, comment
}

// Modify is modify_beacon.
func (m *Manager) Modify(name string, data any) (bool, string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.pillar.Has(name) {
		return false, fmt.Sprintf("Cannot modify beacon item %s, it is configured in pillar.", name)
	}
	m.conf.Set(name, ordered.DeepCopy(data))
	m.drop(name)
	return true, fmt.Sprintf("Updating settings for beacon item: %s", name)
}

// Delete is delete_beacon.
func (m *Manager) Delete(name string) (bool, string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.pillar.Has(name) {
		return false, fmt.Sprintf("Cannot delete beacon item %s, it is configured in pillar.", name)
	}
	if !m.conf.Has(name) {
		return true, fmt.Sprintf("Beacon item %s not found.", name)
	}
	m.conf.Delete(name)
	m.drop(name)
	return true, fmt.Sprintf("Deleting beacon item: %s", name)
}

// SetBeaconEnabled is enable_beacon and disable_beacon.
func (m *Manager) SetBeaconEnabled(name string, on bool) (bool, string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	verb := "enable"
	if !on {
		verb = "disable"
	}
	if m.pillar.Has(name) {
		return false, fmt.Sprintf("Cannot %s beacon item %s, it is configured in pillar.", verb, name)
	}
	m.setBeaconEnabledLocked(name, on)
	if on {
		return true, "Enabling beacon item " + name
	}
	return true, "Disabling beacon item " + name
}

// setBeaconEnabledLocked is _update_enabled: the `enabled` key of a
// mapping config, or the {enabled: …} item of a list, added if absent.
func (m *Manager) setBeaconEnabledLocked(name string, on bool) {
	switch x := m.conf.Value(name).(type) {
	case *ordered.Map:
		x.Set("enabled", on)
	case []any:
		for _, item := range x {
			if mm, ok := item.(*ordered.Map); ok && mm.Has("enabled") {
				mm.Set("enabled", on)
				return
			}
		}
		m.conf.Set(name, append(x, ordered.FromPairs("enabled", on)))
	}
	if !on {
		m.drop(name)
	}
}

// SetEnabled is enable_beacons and disable_beacons: the global switch.
func (m *Manager) SetEnabled(on bool) {
	m.mu.Lock()
	m.conf.Set("enabled", on)
	m.mu.Unlock()
}

// Enabled is the global switch of the configuration's beacons and
// whether it is set at all.
func (m *Manager) Enabled() (on, set bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.conf.Get("enabled")
	return py.Truthy(v), ok
}

// BeaconEnabled is the `enabled` item of beacon name (a mapping's key
// or a list's {enabled: …}) and whether it has one.
func (m *Manager) BeaconEnabled(name string) (on, set bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	bc := asConfigDict(m.merged(All).Value(name))
	v, ok := bc.Get("enabled")
	return py.Truthy(v), ok
}

// Reset is reset: no beacons from the configuration.
func (m *Manager) Reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.conf = ordered.New()
	for name := range m.inst {
		if !m.pillar.Has(name) {
			m.drop(name)
		}
	}
}

// ConfFile is where beacons.save writes: beacons.conf in the directory
// of default_include beside conf_file (salt/modules/beacons.py save).
func ConfFile(confDir, defaultInclude string) string {
	return filepath.Join(confDir, filepath.Dir(defaultInclude), "beacons.conf")
}

// Save writes beacons as {"beacons": …} to path as beacons.save does
// (safe_dump, default_flow_style=False).
func Save(path string, beacons *ordered.Map) error {
	text, err := saltyaml.Dump(ordered.FromPairs("beacons", beacons), saltyaml.DumpOptions{SortKeys: true})
	if err != nil {
		return fmt.Errorf("save beacons: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("save beacons: %w", err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		return fmt.Errorf("save beacons: %w", err)
	}
	return nil
}
