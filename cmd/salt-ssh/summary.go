package main

import (
	"io"
	"slices"

	"github.com/brinesalt/brine/output"
	"github.com/brinesalt/brine/sshexec"
)

// summary is salt-ssh --summary, which Salt's salt-ssh lacks (Salt's
// `salt` has it: salt/cli/salt.py _print_returns_summary, printed after
// the returns and only without --out). At a thousand hosts what matters
// is found first, so Brine's salt-ssh holds the hosts' returns until the
// run ends and then prints the totals, with the IDs of the hosts that
// were not reached and of those that failed, then the failed hosts'
// returns, then the others, each group in the order the hosts finished.
// With --out the totals go to stderr, so stdout stays one outputter's
// documents.
type summary struct {
	failed, ok []sshexec.Result
}

// add holds one host's result.
func (s *summary) add(r sshexec.Result) {
	if r.Retcode != 0 || r.Err != nil {
		s.failed = append(s.failed, r)
		return
	}
	s.ok = append(s.ok, r)
}

// counts are the totals in the shape of Salt's summary: a host whose
// connection or deploy failed did not return ("not connected"); one
// that ran and exited non-zero returned with errors.
func (s *summary) counts() output.ReturnsSummary {
	rs := output.ReturnsSummary{Targeted: len(s.failed) + len(s.ok), Names: true}
	for _, r := range s.failed {
		if r.Err != nil {
			rs.NotConnected = append(rs.NotConnected, r.ID)
		} else {
			rs.Failed = append(rs.Failed, r.ID)
		}
	}
	rs.Returned = rs.Targeted - len(rs.NotConnected)
	slices.Sort(rs.NotConnected)
	slices.Sort(rs.Failed)
	return rs
}

// print writes the totals to w and then each held result, failures
// first, through show.
func (s *summary) print(w io.Writer, show func(sshexec.Result)) error {
	if err := output.WriteReturnsSummary(w, s.counts()); err != nil {
		return err
	}
	for _, r := range append(s.failed, s.ok...) {
		show(r)
	}
	return nil
}
