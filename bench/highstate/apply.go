package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// tree is a generated minion configuration and file_roots.
type tree struct {
	etc, out, cache string
	trash           string // where reset moves old output and caches
	resets          int
	shape           treeShape
}

// newTree writes the tree; fqdns false adds enable_fqdns_grains: False,
// which takes the reverse lookups of the host's addresses (up to 250 ms
// when the resolver does not answer) out of the grains.
func newTree(work string, shape treeShape, fqdns bool) (*tree, error) {
	t := &tree{etc: filepath.Join(work, "etc"), out: filepath.Join(work, "out"), cache: filepath.Join(work, "cache"),
		trash: filepath.Join(work, "trash"), shape: shape}
	srv := filepath.Join(work, "srv")
	if err := os.MkdirAll(t.etc, 0o755); err != nil {
		return nil, err
	}
	if err := writeTree(srv, t.out, shape); err != nil {
		return nil, fmt.Errorf("write file_roots: %w", err)
	}
	minion := fmt.Sprintf("id: bench\nfile_client: local\ncachedir: %s\nfile_roots:\n  base:\n    - %s\n", t.cache, srv)
	if !fqdns {
		minion += "enable_fqdns_grains: False\n"
	}
	if err := os.WriteFile(filepath.Join(t.etc, "minion"), []byte(minion), 0o644); err != nil {
		return nil, err
	}
	return t, nil
}

// reset empties the target directory and the minion cache, so the next
// run is a first run. They are moved aside, not deleted: ext4 makes a
// new inode slower the more inodes were deleted nearby in the last
// seconds (recently_deleted in ext4_create), so deleting 500 files
// before every run would measure the bench's own churn — and charge it
// to whoever runs next — rather than a first run on a host. The moved
// trees go when the bench's work directory is removed at the end.
func (t *tree) reset() error {
	t.resets++
	for _, d := range []string{t.out, t.cache} {
		if _, err := os.Lstat(d); err != nil {
			continue
		}
		trash := filepath.Join(t.trash, fmt.Sprintf("%d-%s", t.resets, filepath.Base(d)))
		if err := os.MkdirAll(t.trash, 0o755); err != nil {
			return err
		}
		if err := os.Rename(d, trash); err != nil {
			return err
		}
	}
	return nil
}

// sample is one run: wall time, peak RSS of the process, and what the
// state run reported.
type sample struct {
	wall            time.Duration
	cpu             time.Duration // user + system time of the process
	rss             int64         // bytes
	states, changed int
}

// runner is one command under test with its own tree and samples.
type runner struct {
	name          string
	tree          *tree
	argv          []string
	check         bool // the command prints state.apply's json output
	first, second []sample
}

// once resets the tree and runs the command twice: into the empty target
// directory, then with nothing to change.
func (r *runner) once(ctx context.Context, timeout time.Duration) error {
	if err := r.tree.reset(); err != nil {
		return err
	}
	s, err := r.exec(ctx, timeout)
	if err != nil {
		return fmt.Errorf("first run: %w", err)
	}
	r.first = append(r.first, s)
	if s, err = r.exec(ctx, timeout); err != nil {
		return fmt.Errorf("second run: %w", err)
	}
	r.second = append(r.second, s)
	return nil
}

func (r *runner) exec(ctx context.Context, timeout time.Duration) (sample, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.argv[0], r.argv[1:]...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		return sample{}, fmt.Errorf("%s: %w: %s", strings.Join(cmd.Args, " "), err, tail(stderr.String()))
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	s := sample{wall: wall, cpu: cpu, rss: ru.Maxrss << 10}
	if r.check {
		if err := s.count(stdout.Bytes(), r.tree.shape.states()); err != nil {
			return sample{}, err
		}
	}
	return s, nil
}

// count reads the json outputter's {"local": {tag: result}} and checks
// that the run had every state and no failure.
func (s *sample) count(out []byte, want int) error {
	var ret map[string]map[string]struct {
		Result  *bool          `json:"result"`
		Changes map[string]any `json:"changes"`
		Comment any            `json:"comment"`
	}
	if err := json.Unmarshal(out, &ret); err != nil {
		return fmt.Errorf("read state.apply output: %w: %s", err, tail(string(out)))
	}
	for tag, r := range ret["local"] {
		s.states++
		if r.Result == nil || !*r.Result {
			return fmt.Errorf("state %s failed: %v", tag, r.Comment)
		}
		if len(r.Changes) > 0 {
			s.changed++
		}
	}
	if s.states != want {
		return fmt.Errorf("state.apply ran %d states, want %d", s.states, want)
	}
	return nil
}

func (r *runner) print(floor *runner) {
	printRow(r.name, "first (empty target dir)", r.first, floor.first, r.check)
	printRow(r.name, "second (no file changes)", r.second, floor.second, r.check)
}

func printRow(name, run string, xs, floor []sample, counted bool) {
	m, f := medians(xs), medians(floor)
	states, changed := "—", "—"
	if counted {
		states, changed = fmt.Sprint(xs[0].states), fmt.Sprint(xs[len(xs)/2].changed)
	}
	fmt.Printf("| %s | %s | %s | %s – %s | %.2f | %.2f | %s | %.2f | %.1f MB | %.2f | %s | %s |\n", name, run, ms(m.wall), ms(m.lo), ms(m.hi),
		float64(m.wall)/float64(f.wall), float64(m.wall)/float64(wallTarget), ms(m.cpu), float64(m.cpu)/float64(f.cpu),
		float64(m.rss)/(1<<20), float64(m.rss)/float64(rssTarget), states, changed)
}

// stats are the medians of a run's samples (wall time, CPU time, peak
// RSS) and its fastest and slowest wall time.
type stats struct {
	wall, cpu, lo, hi time.Duration
	rss               int64
}

func medians(xs []sample) stats {
	walls := make([]time.Duration, len(xs))
	cpus := make([]time.Duration, len(xs))
	rsss := make([]int64, len(xs))
	for i, x := range xs {
		walls[i], cpus[i], rsss[i] = x.wall, x.cpu, x.rss
	}
	slices.Sort(walls)
	slices.Sort(cpus)
	slices.Sort(rsss)
	n := len(xs) / 2
	return stats{wall: walls[n], cpu: cpus[n], rss: rsss[n], lo: walls[0], hi: walls[len(walls)-1]}
}

func ms(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond)) }

func tail(s string) string {
	if len(s) > 600 {
		return s[len(s)-600:]
	}
	return s
}

func containsBrine(version string) bool { return strings.Contains(version, "Brine") }
