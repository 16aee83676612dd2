package compile

import (
	"sort"

	"github.com/brinesalt/brine/internal/ordered"
)

// Chunk is one low chunk: the mapping of a single state call (state, fun,
// name, __id__, __sls__, __env__, order and the arguments).
type Chunk = *ordered.Map

// CompileHigh turns high data into ordered low chunks (salt/state.py
// State.compile_high_data and order_chunks). `names` expands to one chunk
// per name with fractional orders.
func CompileHigh(high *ordered.Map) []Chunk {
	var chunks []Chunk
	high.Range(func(idK, bv any) bool {
		if isDunder(idK) {
			return true
		}
		b, ok := bv.(*ordered.Map)
		if !ok {
			return true
		}
		b.Range(func(sk, run any) bool {
			if isDunder(sk) {
				return true
			}
			chunks = append(chunks, stateChunks(idK, b, str(sk), run)...)
			return true
		})
		return true
	})
	return OrderChunks(chunks)
}

func stateChunks(id any, b *ordered.Map, state string, run any) []Chunk {
	chunk := ordered.FromPairs("state", state, "name", id)
	if v, ok := b.Get("__sls__"); ok {
		chunk.Set("__sls__", v)
	}
	if v, ok := b.Get("__env__"); ok {
		chunk.Set("__env__", v)
	}
	chunk.Set("__id__", id)
	list, _ := run.([]any)
	funcs, names := gatherArgs(chunk, id, list)
	if len(funcs) == 0 {
		return nil
	}
	// Salt iterates a set of functions; verify_high guarantees one.
	fun := funcs[0]
	if len(names) == 0 {
		live := ordered.DeepCopy(chunk).(*ordered.Map)
		live.Set("fun", fun)
		return []Chunk{live}
	}
	out := make([]Chunk, 0, len(names))
	for i, entry := range names {
		live := nameChunk(chunk, entry)
		live.Set("name_order", i+1)
		live.Set("fun", fun)
		out = append(out, live)
	}
	return out
}

// gatherArgs copies a state's arguments into chunk and returns its
// functions and `names` entries. `state` is never passed down and a
// `name` that is not a string falls back to the ID.
func gatherArgs(chunk Chunk, id any, list []any) (funcs []string, names []any) {
	seen := map[string]bool{}
	for _, arg := range list {
		switch a := arg.(type) {
		case string:
			if !seen[a] {
				seen[a] = true
				funcs = append(funcs, a)
			}
		case *ordered.Map:
			a.Range(func(k, val any) bool {
				switch key := str(k); key {
				case "names":
					nl, _ := val.([]any)
					for _, n := range nl {
						if !containsEqual(names, n) {
							names = append(names, n)
						}
					}
				case "state":
				case "name":
					if _, ok := val.(string); !ok {
						val = id
					}
					chunk.Set(key, val)
				default:
					chunk.Set(key, val)
				}
				return true
			})
		}
	}
	return funcs, names
}

// nameChunk is the chunk of one `names` entry: a name, or a one-key
// mapping of the name to a list of extra arguments.
func nameChunk(chunk Chunk, entry any) Chunk {
	live := ordered.DeepCopy(chunk).(*ordered.Map)
	em, ok := entry.(*ordered.Map)
	if !ok || em.Len() == 0 {
		live.Set("name", entry)
		return live
	}
	k := em.Keys()[0]
	live.Set("name", k)
	opts, _ := em.Value(k).([]any)
	for _, o := range opts {
		if om, ok := o.(*ordered.Map); ok {
			om.Range(func(ok2, ov any) bool { live.Set(ok2, ordered.DeepCopy(ov)); return true })
		}
	}
	return live
}

func containsEqual(l []any, v any) bool {
	for _, x := range l {
		if ordered.Equal(x, v) {
			return true
		}
	}
	return false
}

// OrderChunks resolves `order` values and sorts the chunks (salt/state.py
// State.order_chunks): no order or a non-numeric string is the cap
// (largest integer order + 100), `first` is 0, `last` is cap+1000000, a
// negative n is cap+1000000+n, names add i/10000, and ties sort by
// state+name+fun.
func OrderChunks(chunks []Chunk) []Chunk {
	capv := 1.0
	for _, c := range chunks {
		if o, ok := c.Get("order"); ok {
			var co float64
			switch x := o.(type) {
			case int:
				co = float64(x)
			case bool:
				if x {
					co = 1
				}
			default:
				continue
			}
			if co > capv-1 && co > 0 {
				capv = co + 100
			}
		}
	}
	for _, c := range chunks {
		o, ok := c.Get("order")
		if !ok {
			c.Set("order", intOrFloat(capv))
			continue
		}
		switch x := o.(type) {
		case int, float64, bool:
			// Python's bool is an int: True sorts as 1 and prints as true.
		default:
			switch x {
			case "last":
				c.Set("order", intOrFloat(capv+1000000))
			case "first":
				c.Set("order", 0)
			default:
				c.Set("order", intOrFloat(capv))
			}
		}
		if no, ok := c.Get("name_order"); ok {
			c.Delete("name_order")
			n, _ := ordered.Number(no)
			f, _ := ordered.Number(c.Value("order"))
			c.Set("order", f+n/10000.0)
		}
		if f, _ := ordered.Number(c.Value("order")); f < 0 {
			c.Set("order", addOrder(capv+1000000, c.Value("order")))
		}
	}
	sort.SliceStable(chunks, func(i, j int) bool {
		oi, _ := ordered.Number(chunks[i].Value("order"))
		oj, _ := ordered.Number(chunks[j].Value("order"))
		if oi != oj {
			return oi < oj
		}
		return sortLabel(chunks[i]) < sortLabel(chunks[j])
	})
	return chunks
}

func sortLabel(c Chunk) string {
	return str(c.Value("state")) + str(c.Value("name")) + str(c.Value("fun"))
}

func intOrFloat(f float64) any {
	if f == float64(int(f)) {
		return int(f)
	}
	return f
}

func addOrder(base float64, o any) any {
	if i, ok := o.(int); ok {
		return intOrFloat(base + float64(i))
	}
	f, _ := ordered.Number(o)
	return base + f
}
