package sshside

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"
)

// Tool is one side of the comparison.
type Tool struct {
	Name string
	// Reps is how many first/second pairs to run.
	Reps int
	// Skip, when set, is why the tool has no rows (e.g. not available).
	Skip string
	// Reset undoes the previous run on the hosts, untimed, before every
	// first run.
	Reset func(ctx context.Context) error
	// Next returns the command for one run and a cleanup to call after
	// it, untimed (nil when there is none).
	Next func() (Command, func())
	// Peer marks the tool the ratios are taken against.
	Peer bool

	first, second []Sample
	notes         []string
}

// Compare runs every tool's pairs of first and second runs, the tools
// taking turns within each repetition so machine noise hits them alike.
func Compare(ctx context.Context, e *Env, tools []*Tool, timeout time.Duration) error {
	most := 0
	for _, t := range tools {
		most = max(most, t.Reps)
	}
	for rep := range most {
		for _, t := range tools {
			if t.Skip != "" || rep >= t.Reps {
				continue
			}
			var mem *memLimitError
			if err := t.pair(ctx, e, timeout); errors.As(err, &mem) {
				t.Skip = "not measured: " + mem.Error()
			} else if err != nil {
				return fmt.Errorf("%s: %w", t.Name, err)
			}
		}
	}
	return nil
}

func (t *Tool) pair(ctx context.Context, e *Env, timeout time.Duration) error {
	if err := t.Reset(ctx); err != nil {
		return fmt.Errorf("reset hosts: %w", err)
	}
	for i, samples := range []*[]Sample{&t.first, &t.second} {
		cmd, after := t.Next()
		s, err := e.Run(ctx, cmd, timeout)
		if after != nil {
			after()
		}
		if err != nil {
			return fmt.Errorf("run %d: %w", i+1, err)
		}
		if s.Note != "" {
			t.notes = append(t.notes, fmt.Sprintf("%s, run %d: %s", t.Name, i+1, s.Note))
		}
		*samples = append(*samples, s)
	}
	return nil
}

// Print writes the table: one row per tool and run, with wall time as a
// ratio to the peer's same run.
func Print(w io.Writer, tools []*Tool) {
	fmt.Fprintln(w, "| tool | run | wall | min – max | × Ansible | CPU | peak RSS | on the wire | hosts OK | changed |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	var peer *Tool
	for _, t := range tools {
		if t.Peer && t.Skip == "" {
			peer = t
		}
	}
	for _, t := range tools {
		if t.Skip != "" {
			fmt.Fprintf(w, "| %s | — | %s | | | | | | | |\n", t.Name, t.Skip)
			continue
		}
		if len(t.second) == 0 {
			fmt.Fprintf(w, "| %s | — | no completed run | | | | | | | |\n", t.Name)
			continue
		}
		var pf, ps []Sample
		if peer != nil && len(peer.second) > 0 {
			pf, ps = peer.first, peer.second
		}
		row(w, t.Name, "first", t.first, pf)
		row(w, t.Name, "second (no change)", t.second, ps)
	}
	for _, t := range tools {
		for i, n := range t.notes {
			if i == 0 {
				fmt.Fprintf(w, "\nFailures reported by %s (%d runs had some):\n", t.Name, len(t.notes))
			}
			if i < 3 {
				fmt.Fprintf(w, "- %s\n", Tail(n))
			}
		}
	}
}

func row(w io.Writer, name, run string, xs, peer []Sample) {
	m := median(xs)
	ratio := "—"
	if len(peer) > 0 && len(xs) > 0 {
		ratio = fmt.Sprintf("%.3f", float64(m.Wall)/float64(median(peer).Wall))
	}
	walls := make([]time.Duration, len(xs))
	for i, x := range xs {
		walls[i] = x.Wall
	}
	slices.Sort(walls)
	wire := "—"
	if m.Wire >= 0 {
		wire = bytesize(m.Wire)
	}
	fmt.Fprintf(w, "| %s | %s | %s | %s – %s | %s | %s | %.0f MB | %s | %s | %d |\n", name, run, secs(m.Wall), secs(walls[0]), secs(walls[len(walls)-1]),
		ratio, secs(m.CPU), float64(m.RSS)/(1<<20), wire, hostsOK(xs), m.Changed)
}

// hostsOK is "50/50", or the worst run's count when some run had failed
// hosts.
func hostsOK(xs []Sample) string {
	worst := xs[0]
	for _, x := range xs {
		if x.HostsOK-x.Hosts < worst.HostsOK-worst.Hosts {
			worst = x
		}
	}
	s := fmt.Sprintf("%d/%d", worst.HostsOK, worst.Hosts)
	if worst.HostsOK < worst.Hosts {
		s += " (worst run)"
	}
	return s
}

// median takes the median of every figure separately.
func median(xs []Sample) Sample {
	pick := func(get func(Sample) int64) int64 {
		v := make([]int64, len(xs))
		for i, x := range xs {
			v[i] = get(x)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	return Sample{
		Wall:    time.Duration(pick(func(s Sample) int64 { return int64(s.Wall) })),
		CPU:     time.Duration(pick(func(s Sample) int64 { return int64(s.CPU) })),
		RSS:     pick(func(s Sample) int64 { return s.RSS }),
		Wire:    pick(func(s Sample) int64 { return s.Wire }),
		Outcome: Outcome{Changed: int(pick(func(s Sample) int64 { return int64(s.Changed) }))},
	}
}

func secs(d time.Duration) string {
	if d < 10*time.Second {
		return fmt.Sprintf("%.2f s", d.Seconds())
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}

func bytesize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	default:
		return fmt.Sprintf("%.0f kB", float64(n)/(1<<10))
	}
}
