package output

import (
	"io"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
)

// Printer prints salt-ssh results host by host as they arrive, choosing
// data and outputter per host as salt/client/ssh/__init__.py SSH.run
// does, or, with Static, collects them and prints once at Flush
// (--static).
type Printer struct {
	W io.Writer
	// Out is --out; "" when not given. It wins over a return's own "out"
	// unless it is "highstate" (salt/output/__init__.py get_printout).
	Out string
	// Static collects every host into one document printed by Flush.
	Static bool
	Opts   Options
	// Registry is where outputters are looked up; nil means the global one.
	Registry *Registry

	current string // SSH.run's outputter variable: it sticks across hosts
	static  *ordered.Map
}

// Host prints (or, with Static, stores) one host's return.
func (p *Printer) Host(host string, ret any) error {
	out, data := SSHDisplay(host, ret, p.outputter())
	p.current = out
	if p.Static {
		if p.static == nil {
			p.static = ordered.New()
		}
		p.static.Set(host, data.Value(host))
		return nil
	}
	return p.write(out, data)
}

// Flush prints the collected document of a Static printer.
func (p *Printer) Flush() error {
	if !p.Static || p.static == nil {
		return nil
	}
	data := p.static
	p.static = nil
	return p.write(p.outputter(), data)
}

func (p *Printer) outputter() string {
	if p.current != "" {
		return p.current
	}
	if p.Out != "" {
		return p.Out
	}
	return "nested"
}

func (p *Printer) write(name string, data any) error {
	if p.Out != "" && p.Out != "highstate" {
		name = p.Out
	}
	r := p.Registry
	if r == nil {
		r = global
	}
	return r.Write(p.W, name, data, p.Opts)
}

// SSHDisplay returns the outputter name and the {host: data} document
// salt-ssh prints for one host's return (SSH.run): an ssh error's stderr
// alone; a non-dict as is; a dict without "return" as is, or only its
// stderr when _error is "Permission denied"; otherwise the "return" value
// with the return's "out" as outputter (else current).
func SSHDisplay(host string, ret any, current string) (string, *ordered.Map) {
	doc := func(v any) *ordered.Map { return ordered.FromPairs(host, v) }
	m, ok := ret.(*ordered.Map)
	if !ok {
		return current, doc(ret)
	}
	if stderr, _ := m.Value("stderr").(string); strings.HasPrefix(stderr, "ssh:") {
		return current, doc(stderr)
	}
	if !m.Has("return") {
		if e, _ := m.Value("_error").(string); e == "Permission denied" {
			return current, doc(m.Value("stderr"))
		}
		return current, doc(m)
	}
	out := current
	if o, ok := m.Value("out").(string); ok && o != "" {
		out = o
	}
	return out, doc(m.Value("return"))
}
