// Package frame is the wire format between the controller and the thin
// binary on a target: one job goes in on stdin as JSON, one result comes
// out on stdout inside a length-prefixed frame, so that nothing a login
// shell, sudo or a command prints can be mistaken for the result. This
// replaces salt-ssh's delimiter scraping (salt/client/ssh/__init__.py,
// RSTR).
//
// A frame is the header line "\x00BRINE1 <n>\n" followed by exactly n
// bytes of JSON and a newline.
package frame

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/brinesalt/brine/internal/ordered"
)

const magic = "\x00BRINE1 "

// MaxSize bounds a frame's payload so that a corrupt header cannot make
// the reader allocate without limit.
const MaxSize = 1 << 30

// ErrNoFrame means the stream ended without a complete frame.
var ErrNoFrame = errors.New("no result frame in output")

// Job is what the controller asks the thin binary to do.
type Job struct {
	JID string `json:"jid"`
	ID  string `json:"id"`
	Fun string `json:"fun"`
	Arg []any  `json:"arg"`
	// Kwarg carries keyword arguments in the order given.
	Kwarg *ordered.Map `json:"kwarg,omitempty"`
	// Grains are static grains (roster `grains:`) merged over gathered ones.
	Grains *ordered.Map `json:"grains,omitempty"`
	// Opts are minion options (roster `minion_opts`, thin_dir, …).
	Opts *ordered.Map `json:"opts,omitempty"`
	// Pillar is this host's rendered pillar, compiled on the controller.
	Pillar *ordered.Map `json:"pillar,omitempty"`
	// Data carries function-specific payloads, such as a compiled
	// lowstate and the salt:// files it references.
	Data *ordered.Map `json:"data,omitempty"`
}

// Result is what the thin binary answers, in Salt's return shape.
type Result struct {
	ID      string `json:"id"`
	JID     string `json:"jid"`
	Fun     string `json:"fun"`
	Return  any    `json:"return"`
	Retcode int    `json:"retcode"`
	// Out names the outputter the function asks for, as Salt's returns
	// carry "out" (e.g. "highstate" for state functions).
	Out string `json:"out,omitempty"`
	// Grains are the host's grains, sent back when the job's Data asks
	// for them (ReturnGrains, OfferGrains) so the controller can cache
	// them.
	Grains *ordered.Map `json:"grains,omitempty"`
}

// Data keys about the host's grains: ReturnGrains asks the thin binary
// to send them back with the result, gathering them if the job did not;
// OfferGrains asks for them only if the job read them anyway, so that a
// job that never needs them (test.ping) costs the host no gather.
const (
	ReturnGrains = "return_grains"
	OfferGrains  = "offer_grains"
)

// The deploy line: what a host prints, with exit status ExitThinDeploy,
// when it needs a thin binary sent. Its words after DeployMarker are the
// kernel and machine (as `uname -s -m` names them), then optionally the
// best decompressor the host has (zstd or gzip) and flags: HasFullToken
// (the full thin of this build is present) or NeedFullToken (the binary
// that answered cannot serve this host: send the full thin).
const (
	DeployMarker   = "BRINE-DEPLOY"
	HasFullToken   = "full"
	NeedFullToken  = "need-full"
	ExitThinDeploy = 11 // salt/defaults/exitcodes.py EX_THIN_DEPLOY
)

// Write writes v as one frame.
func Write(w io.Writer, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode frame: %w", err)
	}
	var b bytes.Buffer
	b.Grow(len(magic) + 12 + len(body))
	b.WriteString(magic)
	b.WriteString(strconv.Itoa(len(body)))
	b.WriteByte('\n')
	b.Write(body)
	b.WriteByte('\n')
	_, err = w.Write(b.Bytes())
	return err
}

// Find returns the payload of the first frame in out, skipping any bytes
// before it (a banner, a sudo lecture).
func Find(out []byte) ([]byte, error) {
	i := bytes.Index(out, []byte(magic))
	if i < 0 {
		return nil, ErrNoFrame
	}
	rest := out[i+len(magic):]
	nl := bytes.IndexByte(rest, '\n')
	if nl < 0 {
		return nil, ErrNoFrame
	}
	n, err := strconv.Atoi(string(rest[:nl]))
	if err != nil || n < 0 || n > MaxSize {
		return nil, fmt.Errorf("bad frame header %q", rest[:nl])
	}
	body := rest[nl+1:]
	if len(body) < n {
		return nil, fmt.Errorf("%w: truncated (%d of %d bytes)", ErrNoFrame, len(body), n)
	}
	return body[:n], nil
}

// DecodeResult finds the frame in out and decodes it, keeping the key
// order of the returned data.
func DecodeResult(out []byte) (*Result, error) {
	body, err := Find(out)
	if err != nil {
		return nil, err
	}
	v, err := ordered.DecodeJSON(bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	m, ok := v.(*ordered.Map)
	if !ok {
		return nil, fmt.Errorf("result frame holds %T, want an object", v)
	}
	r := &Result{Return: m.Value("return")}
	r.ID, _ = m.Value("id").(string)
	r.JID, _ = m.Value("jid").(string)
	r.Fun, _ = m.Value("fun").(string)
	r.Retcode, _ = m.Value("retcode").(int)
	r.Out, _ = m.Value("out").(string)
	r.Grains, _ = m.Value("grains").(*ordered.Map)
	return r, nil
}

// ReadJob decodes a job from r (the thin binary's stdin).
func ReadJob(r io.Reader) (*Job, error) {
	v, err := ordered.DecodeJSON(bufio.NewReader(r))
	if err != nil {
		return nil, fmt.Errorf("read job: %w", err)
	}
	m, ok := v.(*ordered.Map)
	if !ok {
		return nil, fmt.Errorf("read job: got %T, want an object", v)
	}
	j := &Job{}
	j.JID, _ = m.Value("jid").(string)
	j.ID, _ = m.Value("id").(string)
	j.Fun, _ = m.Value("fun").(string)
	j.Arg, _ = m.Value("arg").([]any)
	j.Kwarg, _ = m.Value("kwarg").(*ordered.Map)
	j.Grains, _ = m.Value("grains").(*ordered.Map)
	j.Opts, _ = m.Value("opts").(*ordered.Map)
	j.Pillar, _ = m.Value("pillar").(*ordered.Map)
	j.Data, _ = m.Value("data").(*ordered.Map)
	if j.Fun == "" {
		return nil, errors.New("read job: no fun")
	}
	return j, nil
}
