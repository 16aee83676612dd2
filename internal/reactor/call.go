package reactor

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/compile"
)

// EventUser is the user the reactor's runner and wheel jobs run as;
// events carrying it are the reactor's own and are not reacted to
// (ReactWrap.event_user), which breaks reaction loops.
const EventUser = "Reactor"

// internalKeys are the low chunk keys that are not arguments of the
// reaction's function (REACTOR_INTERNAL_KEYWORDS).
var internalKeys = map[string]bool{"__id__": true, "__sls__": true, "name": true, "order": true,
	"fun": true, "key": true, "state": true}

// Call is one reaction to run, the arguments ReactWrap.run hands to its
// local, runner, wheel or caller wrapper.
type Call struct {
	ID   string // the reaction's ID in the SLS (__id__)
	SLS  string // the file it came from
	Kind string // local, runner, wheel or caller
	Fun  string
	// Tgt, TgtType, Ret and JID are LocalClient.cmd_async's target,
	// tgt_type (or the old expr_form; "glob" when unset), returner and
	// jid, for local reactions.
	Tgt     any
	TgtType string
	Ret     string
	JID     string
	// Metadata is the job's metadata, for local reactions.
	Metadata *ordered.Map
	// Arg and Kwarg are the function's arguments.
	Arg   []any
	Kwarg *ordered.Map
}

// ErrArgFormat is a new-style `args:` that is neither a mapping nor a
// list of one-key mappings.
var ErrArgFormat = errors.New("incorrect argument format, check the Reactor System documentation for the correct format")

// NewCall builds the call of one low chunk as ReactWrap.run does: the
// new style puts `args:` in Kwarg (a list of one-key mappings is merged
// into one; a caller reaction's plain list stays positional, the legacy
// caller form) and ignores `arg`/`kwarg` with a warning; the old style
// takes `arg` and `kwarg` as they are, and a runner or wheel reaction
// without them takes the chunk's other keys as keyword arguments
// (format_call against the function, which Brine's runners do not
// declare: every key but the internal ones is passed).
func NewCall(chunk compile.Chunk, log *slog.Logger) (*Call, error) {
	c := &Call{Kind: str(chunk.Value("state")), Fun: str(chunk.Value("fun")), ID: str(chunk.Value("__id__")),
		SLS: str(chunk.Value("__sls__")), Kwarg: ordered.New(), TgtType: "glob"}
	if c.Kind == "local" {
		tgt, ok := chunk.Get("tgt")
		if !ok {
			return nil, errors.New("local takes at least 2 arguments (1 given)")
		}
		c.Tgt = tgt
		c.localOptions(chunk)
	}
	if args, ok := chunk.Get("args"); ok {
		return c, c.newStyle(chunk, args, log)
	}
	if a, ok := chunk.Value("arg").([]any); ok {
		c.Arg = a
	} else if a, ok := chunk.Get("arg"); ok && a != nil {
		c.Arg = []any{a}
	}
	if kw, ok := chunk.Value("kwarg").(*ordered.Map); ok {
		c.Kwarg = kw.Copy()
	}
	if (c.Kind == "runner" || c.Kind == "wheel") && !(chunk.Has("arg") && chunk.Has("kwarg")) {
		if !chunk.Has("kwarg") {
			for _, k := range chunk.Keys() {
				ks := ordered.KeyString(k)
				if internalKeys[ks] || ks == "arg" || ks == "kwarg" || isDunder(ks) {
					continue
				}
				c.Kwarg.Set(ks, chunk.Value(k))
			}
		}
	}
	return c, nil
}

// newStyle is the `args:` form.
func (c *Call) newStyle(chunk compile.Chunk, args any, log *slog.Logger) error {
	for _, item := range []string{"arg", "kwarg"} {
		if v, ok := chunk.Get(item); ok {
			log.Warn(fmt.Sprintf("Reactor '%s' is ignoring '%s' param %v due to presence of 'args' param. Check the Reactor System documentation for the correct argument format.",
				c.ID, item, v))
		}
	}
	list, isList := args.([]any)
	if c.Kind == "caller" && isList && !isDictList(list) {
		c.Arg = list
		return nil
	}
	switch x := args.(type) {
	case *ordered.Map:
		c.Kwarg = x.Copy()
		return nil
	case []any:
		kw, ok := repackDictList(x)
		if ok && kw.Len() > 0 {
			c.Kwarg = kw
			return nil
		}
	}
	return ErrArgFormat
}

// localOptions takes LocalClient.cmd_async's own keywords.
func (c *Call) localOptions(chunk compile.Chunk) {
	if t, ok := chunk.Value("tgt_type").(string); ok && t != "" {
		c.TgtType = t
	} else if t, ok := chunk.Value("expr_form").(string); ok && t != "" {
		c.TgtType = t
	}
	c.Ret, _ = chunk.Value("ret").(string)
	c.JID, _ = chunk.Value("jid").(string)
	c.Metadata, _ = chunk.Value("metadata").(*ordered.Map)
}

// PublishArgs is the local reaction's publication arguments: Arg with
// Kwarg appended as a {"__kwarg__": True, ...} mapping when it is not
// empty (LocalClient's condition_kwarg).
func (c *Call) PublishArgs() []any {
	out := append([]any{}, c.Arg...)
	if c.Kwarg != nil && c.Kwarg.Len() > 0 {
		kw := ordered.FromPairs("__kwarg__", true)
		c.Kwarg.Range(func(k, v any) bool { kw.Set(k, v); return true })
		out = append(out, kw)
	}
	return out
}

// isDictList is salt.utils.data.is_dictlist: a list of mappings only.
func isDictList(l []any) bool {
	for _, x := range l {
		if _, ok := x.(*ordered.Map); !ok {
			return false
		}
	}
	return true
}

// repackDictList is salt.utils.data.repack_dictlist: one-key mappings
// merged into one; plain scalars are skipped; a mapping of more keys,
// or anything else, makes the whole list invalid.
func repackDictList(l []any) (*ordered.Map, bool) {
	out := ordered.New()
	for _, x := range l {
		switch e := x.(type) {
		case string, int, int64, float64, bool:
			continue
		case *ordered.Map:
			if e.Len() != 1 {
				return nil, false
			}
			k := e.Keys()[0]
			out.Set(k, e.Value(k))
		default:
			return nil, false
		}
	}
	return out, true
}

func isDunder(k string) bool { return len(k) > 4 && k[:2] == "__" && k[len(k)-2:] == "__" }

func str(v any) string {
	if v == nil {
		return ""
	}
	return ordered.KeyString(v)
}
