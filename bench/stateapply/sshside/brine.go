package sshside

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"time"
)

// SaltSSH is `salt-ssh -c <etc> --max-procs par --out json tgt fun args...`.
func (e *Env) SaltSSH(bin string, par int, tgt string, fun string, args ...string) []string {
	return append([]string{filepath.Join(bin, "salt-ssh"), "-c", e.Etc, "--max-procs", strconv.Itoa(par), "--out", "json", tgt, fun}, args...)
}

// StateApply is salt-ssh '*' state.apply sls, reading the json outputter.
func (e *Env) StateApply(bin string, par int, sls string) Command {
	return Command{Argv: e.SaltSSH(bin, par, "*", "state.apply", sls), Parse: parseHighstate}
}

// parseHighstate reads salt-ssh's json output, one {host: return} object
// per host. A host is OK when its return is a state return (tag →
// result) with every result true.
func parseHighstate(out []byte) (Outcome, error) {
	var o Outcome
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var obj map[string]json.RawMessage
		if err := dec.Decode(&obj); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return o, fmt.Errorf("read salt-ssh json output: %w: %s", err, Tail(string(out)))
		}
		for _, ret := range obj {
			o.Hosts++
			changed, ok := stateReturn(ret)
			o.Changed += changed
			if ok {
				o.HostsOK++
			}
		}
	}
	return o, nil
}

type stateResult struct {
	Result  *bool          `json:"result"`
	Changes map[string]any `json:"changes"`
}

// stateReturn counts the changed states of one host's return and says
// whether it is a successful state run.
func stateReturn(ret json.RawMessage) (changed int, ok bool) {
	var states map[string]stateResult
	if err := json.Unmarshal(ret, &states); err != nil || len(states) == 0 {
		return 0, false
	}
	ok = true
	for _, s := range states {
		if s.Result == nil {
			return changed, false // not a state return, or a test-mode run
		}
		ok = ok && *s.Result
		if len(s.Changes) > 0 {
			changed++
		}
	}
	return changed, ok
}

// ErrUnavailable means Brine's salt-ssh cannot run state.apply yet; the
// driver leaves Brine's rows out and says why.
var ErrUnavailable = errors.New("salt-ssh state.apply not available")

// unavailableError carries salt-ssh's own words for the table.
type unavailableError struct{ ret string }

func (e *unavailableError) Error() string { return "not available: salt-ssh returned: " + e.ret }
func (e *unavailableError) Unwrap() error { return ErrUnavailable }

// ProbeStateApply runs the state.apply command on one host and reports
// ErrUnavailable with salt-ssh's own words when the return is not a
// successful state run (the returned error then says only that).
func (e *Env) ProbeStateApply(ctx context.Context, bin, sls string) error {
	host := e.Cluster.Hosts()[0].ID
	c := Command{Argv: e.SaltSSH(bin, 1, host, "state.apply", sls), Parse: func(out []byte) (Outcome, error) {
		o, err := parseHighstate(out)
		if err == nil && o.HostsOK != 1 {
			err = &unavailableError{firstReturn(out)}
		}
		return o, err
	}}
	_, err := e.Run(ctx, c, 5*time.Minute)
	var u *unavailableError
	if errors.As(err, &u) {
		return u
	}
	return err
}

// firstReturn is the first host's return, shortened for the table.
func firstReturn(out []byte) string {
	var obj map[string]any
	if json.Unmarshal(out, &obj) == nil {
		for _, v := range obj {
			if s, ok := v.(string); ok {
				return s
			}
			b, _ := json.Marshal(v)
			return Tail(string(b))
		}
	}
	return Tail(string(out))
}

// Raw runs a shell command on every host through `salt-ssh -r`: untimed
// set-up between runs, so any host that fails or is missing is an error.
func (e *Env) Raw(ctx context.Context, bin string, par int, shell string) error {
	argv := []string{filepath.Join(bin, "salt-ssh"), "-c", e.Etc, "--max-procs", strconv.Itoa(par), "--out", "json", "-r", "*", shell}
	c := Command{Argv: argv, Parse: parseRaw}
	s, err := e.Run(ctx, c, 5*time.Minute)
	if err != nil {
		return err
	}
	if want := len(e.Cluster.Hosts()); s.HostsOK != want {
		return fmt.Errorf("salt-ssh -r %q: %d of %d hosts succeeded", shell, s.HostsOK, want)
	}
	return nil
}

// parseRaw reads `salt-ssh -r --out json`: {host: {retcode, stdout, stderr}}.
func parseRaw(out []byte) (Outcome, error) {
	var o Outcome
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var obj map[string]struct {
			Retcode *int `json:"retcode"`
		}
		if err := dec.Decode(&obj); errors.Is(err, io.EOF) {
			return o, nil
		} else if err != nil {
			return o, fmt.Errorf("read salt-ssh -r json output: %w: %s", err, Tail(string(out)))
		}
		for _, r := range obj {
			o.Hosts++
			if r.Retcode != nil && *r.Retcode == 0 {
				o.HostsOK++
			}
		}
	}
}

// WarmThin runs test.ping on every host, untimed, so the thin binary is
// in place and the timed runs measure state.apply, not the one-time
// upload (bench/sshbench measures that).
func (e *Env) WarmThin(ctx context.Context, bin string, par int) error {
	c := Command{Argv: e.SaltSSH(bin, par, "*", "test.ping"), Parse: func(out []byte) (Outcome, error) {
		return Outcome{}, nil
	}}
	_, err := e.Run(ctx, c, 5*time.Minute)
	return err
}
