// Command orchbench measures the orchestration overhead: a
// state.orchestrate run over a swarm of in-process minions in four tiers
// (state.sls on t1-*, then t2-*, t3-*, t4-*, each requiring the one
// before) against the sum of the same four jobs run one after another
// straight through the master (publish, collect every return). The
// difference is what the orchestration adds: rendering the orchestration
// SLS, the requisite engine, the find_job-checked collection, the
// runner job's events and job cache record.
//
//	go run ./bench/orchbench -n 1000 -rounds 5
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/brinesalt/brine/bench/internal/swarm"
	"github.com/brinesalt/brine/client"
	"github.com/brinesalt/brine/internal/config"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/master"
	"github.com/brinesalt/brine/orchestrate"
)

func main() { os.Exit(run()) }

func run() int {
	n := flag.Int("n", 1000, "swarm size (split 10%/40%/40%/10% over the four tiers)")
	rounds := flag.Int("rounds", 5, "measured rounds (each: the four jobs alone, then the orchestration)")
	keydir := flag.String("keydir", filepath.Join(os.TempDir(), "minionswarm-keys"), "where minion keys are kept between runs")
	workdir := flag.String("workdir", "/var/tmp", "where the master's directories are made")
	flag.Parse()
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) == nil {
		lim.Cur = lim.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
	}
	if err := bench(context.Background(), *n, *rounds, *keydir, *workdir); err != nil {
		fmt.Fprintln(os.Stderr, "orchbench:", err)
		return 1
	}
	return 0
}

// tiers are the ids of each tier's minions.
func tiers(n int) [4][]string {
	sizes := [4]int{max(n/10, 1), max(n*4/10, 1), max(n*4/10, 1), 0}
	sizes[3] = max(n-sizes[0]-sizes[1]-sizes[2], 1)
	var out [4][]string
	for t, size := range sizes {
		for i := range size {
			out[t] = append(out[t], fmt.Sprintf("t%d-%05d", t+1, i))
		}
	}
	return out
}

const orchSLS = `{% for t in range(1, 5) %}
tier{{ t }}:
  salt.state:
    - tgt: 't{{ t }}-*'
    - sls: tier
{%- if t > 1 %}
    - require:
      - salt: tier{{ t - 1 }}
{%- endif %}
{% endfor %}
`

func bench(ctx context.Context, n, rounds int, keydir, workdir string) error {
	dir, err := os.MkdirTemp(workdir, "orchbench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	m, cfg, err := startMaster(ctx, dir)
	if err != nil {
		return err
	}
	defer m.Stop()
	ts := tiers(n)
	var ids []string
	for _, t := range ts {
		ids = append(ids, t...)
	}
	keys, err := swarm.Keys(keydir, len(ids))
	if err != nil {
		return err
	}
	t0 := time.Now()
	s, err := swarm.Start(ctx, swarm.Options{IDs: ids, Keys: keys, Host: "127.0.0.1", RetPort: m.RetAddr().(*net.TCPAddr).Port,
		PubPort: m.PublishAddr().(*net.TCPAddr).Port, WorkDir: filepath.Join(dir, "swarm")})
	if err != nil {
		return err
	}
	defer s.Stop()
	if err := waitUp(ctx, m, cfg, len(ids)); err != nil {
		return err
	}
	fmt.Printf("orchbench: %d minions up in %v (tiers %d/%d/%d/%d), %d CPUs\n", len(ids), time.Since(t0).Round(time.Millisecond),
		len(ts[0]), len(ts[1]), len(ts[2]), len(ts[3]), nproc())
	// The first orchestration gathers the master minion's grains once
	// for the master's life; it is reported, not counted.
	first, _, err := orchestrateOnce(ctx, m)
	if err != nil {
		return err
	}
	fmt.Printf("first orchestration (gathers the master's grains): %v\n", round(first))
	var orch, sum, inner []time.Duration
	for r := range rounds {
		alone, err := tiersAlone(ctx, m, cfg, ts)
		if err != nil {
			return err
		}
		wall, durs, err := orchestrateOnce(ctx, m)
		if err != nil {
			return err
		}
		var total, in time.Duration
		for _, d := range alone {
			total += d
		}
		for _, d := range durs {
			in += d
		}
		orch, sum, inner = append(orch, wall), append(sum, total), append(inner, in)
		fmt.Printf("round %d: tiers alone %v (%v), orchestration %v (its states' durations %v)\n", r+1,
			round(total), roundAll(alone), round(wall), roundAll(durs))
	}
	mo, ms, mi := median(orch), median(sum), median(inner)
	fmt.Printf("median over %d rounds: orchestration %v, sum of the tiers alone %v, overhead %v (%.2fx); "+
		"the orchestration's own states %v\n", rounds, round(mo), round(ms), round(mo-ms), float64(mo)/float64(ms), round(mi))
	return nil
}

func startMaster(ctx context.Context, dir string) (*master.Master, *config.Master, error) {
	for _, d := range []string{"conf", "srv/orch", "pillar"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			return nil, nil, err
		}
	}
	files := map[string]string{
		"srv/tier.sls":       "tier_work:\n  test.succeed_with_changes: []\n",
		"srv/orch/tiers.sls": orchSLS,
		"conf/master": fmt.Sprintf("interface: 127.0.0.1\npublish_port: %d\nret_port: %d\npki_dir: %s/pki\ncachedir: %s/cache\n"+
			"sock_dir: %s/sock\nfile_roots: {base: [%s/srv]}\npillar_roots: {base: [%s/pillar]}\nauto_accept: True\n"+
			"timeout: 60\ngather_job_timeout: 30\n", freePort(), freePort(), dir, dir, dir, dir, dir),
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			return nil, nil, err
		}
	}
	cfg, err := config.LoadMaster(filepath.Join(dir, "conf"), nil)
	if err != nil {
		return nil, nil, err
	}
	mo, err := master.OptionsFromConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	mo.Runners = orchestrate.Runners(orchestrate.Config{Master: cfg, ConfigDir: filepath.Join(dir, "conf")})
	m, err := master.New(mo, slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, nil, err
	}
	if err := m.Start(ctx); err != nil {
		return nil, nil, err
	}
	return m, cfg, nil
}

// waitUp waits until every minion answers test.ping.
func waitUp(ctx context.Context, m *master.Master, cfg *config.Master, n int) error {
	deadline := time.Now().Add(10 * time.Minute)
	for time.Now().Before(deadline) {
		if m.Subscribers() >= n {
			got, err := job(ctx, m, cfg, "*", "test.ping", nil)
			if err != nil {
				return err
			}
			if got == n {
				return nil
			}
		}
		time.Sleep(time.Second)
	}
	return fmt.Errorf("the swarm did not come up: %d of %d subscribed", m.Subscribers(), n)
}

// job publishes fun to tgt and collects every return, as salt does.
func job(ctx context.Context, m *master.Master, cfg *config.Master, tgt, fun string, arg []any) (int, error) {
	ch, cancel := m.Bus().Subscribe()
	defer cancel()
	s := &client.Session{Pub: m, Events: ch, Timeout: cfg.Timeout, GatherJobTimeout: cfg.GatherJobTimeout}
	p := master.PublishRequest{Tgt: tgt, TgtType: "glob", Fun: fun, Arg: arg, User: "root"}
	jid, minions, err := m.Publish(ctx, p)
	if err != nil {
		return 0, err
	}
	got, _, err := s.Collect(ctx, jid, minions, p, func(string, *ordered.Map) {})
	return len(got), err
}

// tiersAlone runs the four tiers' state.sls jobs one after another and
// times each.
func tiersAlone(ctx context.Context, m *master.Master, cfg *config.Master, ts [4][]string) ([]time.Duration, error) {
	var out []time.Duration
	for i, ids := range ts {
		t0 := time.Now()
		got, err := job(ctx, m, cfg, fmt.Sprintf("t%d-*", i+1), "state.sls", []any{"tier"})
		if err != nil {
			return nil, err
		}
		if got != len(ids) {
			return nil, fmt.Errorf("tier %d alone: %d of %d returned", i+1, got, len(ids))
		}
		out = append(out, time.Since(t0))
	}
	return out, nil
}

// orchestrateOnce runs the orchestration as salt-run does (a runner job
// through the master) and answers its wall time and its four states'
// durations.
func orchestrateOnce(ctx context.Context, m *master.Master) (time.Duration, []time.Duration, error) {
	t0 := time.Now()
	ret, err := m.Call(ctx, ctx, "runner", master.CallRequest{Fun: "state.orchestrate", Arg: []any{"orch.tiers"}, User: "root"})
	wall := time.Since(t0)
	if err != nil {
		return 0, nil, err
	}
	env, _ := ret.(*ordered.Map)
	if rc := env.Value("retcode"); rc != 0 {
		return 0, nil, fmt.Errorf("orchestration failed (retcode %v): %s", rc, ordered.KeyString(env.Value("data")))
	}
	var durs []time.Duration
	data, _ := env.Value("data").(*ordered.Map)
	data.Range(func(_, v any) bool {
		run, _ := v.(*ordered.Map)
		run.Range(func(k, st any) bool {
			if !strings.Contains(ordered.KeyString(k), "tier") {
				return true
			}
			if d, ok := st.(*ordered.Map).Value("duration").(float64); ok {
				durs = append(durs, time.Duration(d*float64(time.Millisecond)))
			}
			return true
		})
		return false
	})
	return wall, durs, nil
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func round(d time.Duration) time.Duration { return d.Round(time.Millisecond) }

func roundAll(ds []time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = round(d)
	}
	return out
}

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func nproc() int {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return 0
	}
	return strings.Count(string(b), "processor\t:")
}
