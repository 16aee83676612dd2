package run

import "strings"

// chunkIndex finds the chunks a requisite refers to without scanning all
// of them: a reference without glob characters can only match chunks
// whose name, ID or SLS is that very string. Candidates keep chunk order,
// so results are those of a full scan with matches.
type chunkIndex struct {
	n    int // len(chunks) when built
	byNS map[string][]int
}

// globChars are the characters that make a reference a pattern
// (compile.Fnmatch's fast path uses the same set).
const globChars = "*?["

// referenced returns the chunks that (key, val) refers to, in order.
func (r *Runner) referenced(key string, val any) []Chunk {
	s, literal := val.(string)
	literal = literal && !strings.ContainsAny(s, globChars)
	if !literal {
		var out []Chunk
		for _, c := range r.chunks {
			if matches(c, key, val) {
				out = append(out, c)
			}
		}
		return out
	}
	if r.index.byNS == nil || r.index.n != len(r.chunks) {
		r.buildIndex()
	}
	prefix := "n:"
	if key == "sls" {
		prefix = "s:"
	}
	var out []Chunk
	for _, i := range r.index.byNS[prefix+s] {
		if c := r.chunks[i]; matches(c, key, val) {
			out = append(out, c)
		}
	}
	return out
}

// buildIndex maps "n:"+name and "n:"+id (one entry per chunk) and
// "s:"+sls to chunk positions.
func (r *Runner) buildIndex() {
	idx := map[string][]int{}
	for i, c := range r.chunks {
		name, id := str(c.Value("name")), str(c.Value("__id__"))
		idx["n:"+name] = append(idx["n:"+name], i)
		if id != name {
			idx["n:"+id] = append(idx["n:"+id], i)
		}
		sls := str(c.Value("__sls__"))
		idx["s:"+sls] = append(idx["s:"+sls], i)
	}
	r.index = chunkIndex{n: len(r.chunks), byNS: idx}
}
