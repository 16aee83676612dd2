package beacons

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
)

// The host readers, replaced in tests.
var (
	// loadAvg is os.getloadavg.
	loadAvg = readLoadAvg
	// memPercent is psutil.virtual_memory().percent.
	memPercent = readMemPercent
	// mountPoints is the mount points of psutil.disk_partitions(all=True).
	mountPoints = readMountPoints
	// diskPercent is psutil.disk_usage(path).percent.
	diskPercent = readDiskPercent
)

func init() {
	Register("load", func() Beacon { return &loadBeacon{} })
	Register("memusage", func() Beacon { return memusageBeacon{} })
	Register("diskusage", func() Beacon { return diskusageBeacon{} })
}

// round1 is Python's round(x, 1), as psutil rounds its percentages.
func round1(x float64) float64 { return math.RoundToEven(x*10) / 10 }

// percentValue reads a threshold written 63, 63.5 or "63%".
func percentValue(v any) (float64, error) {
	if f, ok := number(v); ok {
		return f, nil
	}
	s := strings.ReplaceAll(fmt.Sprint(v), "%", "")
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return 0, fmt.Errorf("could not convert string to float: %q", fmt.Sprint(v))
	}
	return f, nil
}

// loadBeacon is salt/beacons/load.py; last is its LAST_STATUS.
type loadBeacon struct{ last []float64 }

var avgKeys = []string{"1m", "5m", "15m"}

func (*loadBeacon) Close() {}

func (*loadBeacon) Validate(config any) string {
	list, ok := isList(config)
	if !ok {
		return "Configuration for load beacon must be a list."
	}
	c := ListToDict(list)
	for _, k := range []string{"emitatstartup", "onchangeonly"} {
		if v, ok := c.Get(k); ok {
			if _, isBool := v.(bool); !isBool {
				return fmt.Sprintf("Configuration for load beacon option %s must be a boolean.", k)
			}
		}
	}
	avgs, ok := c.Value("averages").(*ordered.Map)
	if !ok {
		return "Averages configuration is required for load beacon."
	}
	if !avgs.Has("1m") && !avgs.Has("5m") && !avgs.Has("15m") {
		return "Averages configuration for load beacon must contain 1m, 5m or 15m items."
	}
	// Salt's validate reads all three, so a missing one fails there too.
	for _, k := range avgKeys {
		pair, isList := avgs.Value(k).([]any)
		if !isList {
			return "Averages configuration for load beacon: 1m, 5m and 15m items must be a list of two items."
		}
		if len(pair) != 2 {
			return "Configuration for load beacon: 1m, 5m and 15m items must be a list of two items."
		}
		for _, x := range pair {
			if _, err := percentValue(x); err != nil {
				return fmt.Sprintf("Configuration for load beacon: %s: %s", k, err)
			}
		}
	}
	return ""
}

func (b *loadBeacon) Beacon(_ context.Context, _ *Env, config []any) ([]*ordered.Map, error) {
	c := ListToDict(config)
	emitAtStartup := true
	if v, ok := c.Get("emitatstartup"); ok {
		emitAtStartup = py.Truthy(v)
	}
	onChange := py.Truthy(c.Value("onchangeonly"))
	avgs, err := loadAvg()
	if err != nil {
		return nil, err
	}
	if onChange && b.last == nil {
		b.last = avgs
		if !emitAtStartup {
			return nil, nil
		}
	}
	limits, _ := c.Value("averages").(*ordered.Map)
	send := false
	for i, k := range avgKeys {
		pair, ok := limits.Value(k).([]any)
		if !ok || len(pair) != 2 {
			continue
		}
		lo, _ := percentValue(pair[0])
		hi, _ := percentValue(pair[1])
		if onChange {
			if (avgs[i] > hi && b.last[i] < hi) || (avgs[i] < lo && b.last[i] > lo) {
				send = true
				break
			}
		} else if avgs[i] < lo || avgs[i] > hi {
			send = true
			break
		}
	}
	if onChange {
		b.last = avgs
	}
	if !send {
		return nil, nil
	}
	return []*ordered.Map{ordered.FromPairs("1m", avgs[0], "5m", avgs[1], "15m", avgs[2])}, nil
}

// memusageBeacon is salt/beacons/memusage.py.
type memusageBeacon struct{}

func (memusageBeacon) Close() {}

func (memusageBeacon) Validate(config any) string {
	list, ok := isList(config)
	if !ok {
		return "Configuration for memusage beacon must be a list."
	}
	c := ListToDict(list)
	if !c.Has("percent") {
		return "Configuration for memusage beacon requires percent."
	}
	if _, err := percentValue(c.Value("percent")); err != nil {
		return "Configuration for memusage beacon: percent: " + err.Error()
	}
	return ""
}

func (memusageBeacon) Beacon(_ context.Context, _ *Env, config []any) ([]*ordered.Map, error) {
	limit, err := percentValue(ListToDict(config).Value("percent"))
	if err != nil {
		return nil, err
	}
	cur, err := memPercent()
	if err != nil {
		return nil, err
	}
	if cur >= limit {
		return []*ordered.Map{ordered.FromPairs("memusage", cur)}, nil
	}
	return nil, nil
}

// diskusageBeacon is salt/beacons/diskusage.py: each item {mount:
// threshold}, the mount a regular expression matched at the start of
// each mount point ($ added), a usage at or over the threshold an event.
type diskusageBeacon struct{}

func (diskusageBeacon) Close() {}

func (diskusageBeacon) Validate(config any) string {
	list, ok := isList(config)
	if !ok {
		return "Configuration for diskusage beacon must be a list."
	}
	for _, item := range removeHidden(list) {
		m, ok := item.(*ordered.Map)
		if !ok || m.Len() == 0 {
			continue
		}
		k := ordered.KeyString(m.Keys()[0])
		if k == "interval" || k == "disable_during_state_run" || k == "enabled" || k == "beacon_module" || k == "run_once" {
			continue
		}
		if _, err := mountRE(k); err != nil {
			return fmt.Sprintf("Configuration for diskusage beacon: mount %s: %s", k, err)
		}
		if _, err := percentValue(m.Value(k)); err != nil {
			return fmt.Sprintf("Configuration for diskusage beacon: mount %s: %s", k, err)
		}
	}
	return ""
}

// mountRE compiles a mount pattern as re.match does (anchored at the
// start) with the $ Salt adds. Python's lookarounds have no RE2
// equivalent and are refused.
func mountRE(mount string) (*regexp.Regexp, error) {
	if !strings.HasSuffix(mount, "$") {
		mount += "$"
	}
	re, err := regexp.Compile("^(?:" + mount + ")")
	if err != nil {
		return nil, fmt.Errorf("regular expression not supported: %w", err)
	}
	return re, nil
}

func (diskusageBeacon) Beacon(_ context.Context, _ *Env, config []any) ([]*ordered.Map, error) {
	parts, err := mountPoints()
	if err != nil {
		return nil, err
	}
	var out []*ordered.Map
	for _, item := range removeHidden(config) {
		m, ok := item.(*ordered.Map)
		if !ok || m.Len() == 0 {
			continue
		}
		mount := ordered.KeyString(m.Keys()[0])
		re, err := mountRE(mount)
		if err != nil {
			continue
		}
		limit, err := percentValue(m.Value(mount))
		if err != nil {
			continue
		}
		for _, p := range parts {
			if !re.MatchString(p) {
				continue
			}
			cur, err := diskPercent(p)
			if err != nil {
				continue
			}
			if cur >= limit {
				out = append(out, ordered.FromPairs("diskusage", cur, "mount", p))
			}
		}
	}
	return out, nil
}
