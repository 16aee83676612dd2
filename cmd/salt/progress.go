package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/brinesalt/brine/client"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/master"
	"github.com/brinesalt/brine/output"
)

// progressBar is the bar salt/output/progress.py draws with the
// progressbar package: "%3d%% |###   | Elapsed Time: H:MM:SS Returns:
// [n/N]", redrawn in place with a carriage return, 79 columns wide
// (progressbar's default terminal width less one).
type progressBar struct {
	w            io.Writer
	total, count int
	start        time.Time
	width        int
}

func newProgressBar(w io.Writer, total int) *progressBar {
	p := &progressBar{w: w, total: total, start: time.Now(), width: 79}
	p.draw()
	return p
}

func (p *progressBar) line() string {
	if p.count > p.total {
		// As progress.py does for syndics: more returns than targets
		// raise the maximum.
		p.total = p.count
	}
	pct := 100
	if p.total > 0 {
		pct = p.count * 100 / p.total
	}
	left := fmt.Sprintf("%3d%% ", pct)
	el := int(time.Since(p.start).Seconds())
	right := fmt.Sprintf(" Elapsed Time: %d:%02d:%02d Returns: [%d/%d]", el/3600, el/60%60, el%60, p.count, p.total)
	inner := max(p.width-len(left)-len(right)-2, 1)
	filled := inner
	if p.total > 0 {
		filled = inner * p.count / p.total
	}
	return left + "|" + strings.Repeat("#", filled) + strings.Repeat(" ", inner-filled) + "|" + right
}

func (p *progressBar) draw() { fmt.Fprint(p.w, p.line()+"\r") }

func (p *progressBar) add() {
	p.count++
	p.draw()
}

func (p *progressBar) finish() { fmt.Fprintln(p.w, p.line()) }

// withProgress is salt -p (salt/cli/salt.py with progress): the bar on
// stderr moves as returns arrive, the returns themselves are not
// printed, and a summary of the returns follows. Salt's progress path
// does not collect retcodes, so salt -p exits 0 even when a minion
// failed or did not return; Brine matches that.
func (c *cli) withProgress(ctx context.Context, s *client.Session, jid string, minions []string, req master.PublishRequest) int {
	bar := newProgressBar(c.stderr, len(minions))
	got, minions, err := s.Collect(ctx, jid, minions, req, func(string, *ordered.Map) { bar.add() })
	bar.finish()
	if err != nil {
		return c.masterLost(ctx, jid, err)
	}
	var missing []string
	if c.o.verbose {
		// Only with -v does Salt add the silent minions to the returns.
		for _, id := range minions {
			if _, ok := got[id]; !ok {
				missing = append(missing, id)
			}
		}
	}
	c.returnsSummary(got, missing)
	return 0
}

// returnsSummary is salt/cli/salt.py _print_returns_summary.
func (c *cli) returnsSummary(got map[string]int, missing []string) {
	var failed []string
	for id, rc := range got {
		if rc != 0 {
			failed = append(failed, id)
		}
	}
	slices.Sort(failed)
	slices.Sort(missing)
	_ = output.WriteReturnsSummary(c.stdout, output.ReturnsSummary{Targeted: len(got) + len(missing),
		Returned: len(got), NotResponding: missing, Failed: failed, Names: c.o.verbose})
}
