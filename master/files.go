package master

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
	"github.com/brinesalt/brine/state/fileclient"
)

// chunkSize is file_buffer_size (1 MiB): _serve_file sends a file in
// chunks of this size.
const chunkSize = 1 << 20

// fileServer answers the fileserver requests from file_roots
// (salt/fileserver/roots.py).
func (m *Master) fileServer(cmd string, load *ordered.Map) any {
	fc := fileclient.New(m.o.FileRoots, nil)
	saltenv, _ := load.Value("saltenv").(string)
	if saltenv == "" {
		saltenv = "base"
	}
	path, _ := load.Value("path").(string)
	rel, env := fileclient.ParseURL(path)
	if env != "" {
		saltenv = env
	}
	if rel == "" {
		rel = strings.TrimPrefix(path, "salt://")
	}
	switch cmd {
	case protocol.CmdServeFile:
		loc, _ := protocol.AsInt(load.Value("loc"))
		data, ok := readChunk(fc.LocalPath("salt://"+rel, saltenv), loc)
		if !ok {
			return (&protocol.ServeFileReply{Data: []byte{}, Dest: ""}).SaltMap()
		}
		return (&protocol.ServeFileReply{Data: data, Dest: rel}).SaltMap()
	case protocol.CmdFileHash, protocol.CmdFileFind:
		b, ok, err := fc.ReadFile(context.Background(), rel, saltenv)
		if err != nil || !ok {
			return ""
		}
		if cmd == protocol.CmdFileFind {
			return ordered.FromPairs("path", fc.LocalPath("salt://"+rel, saltenv), "rel", rel)
		}
		h := sha256.Sum256(b)
		return ordered.FromPairs("hsum", hex.EncodeToString(h[:]), "hash_type", "sha256")
	case protocol.CmdFileList:
		prefix, _ := load.Value("prefix").(string)
		var out []any
		for _, f := range fc.FileList(saltenv) {
			if strings.HasPrefix(f, prefix) {
				out = append(out, f)
			}
		}
		return orList(out)
	case protocol.CmdDirList:
		prefix, _ := load.Value("prefix").(string)
		seen := map[string]bool{}
		for _, f := range fc.FileList(saltenv) {
			for d := f; strings.Contains(d, "/"); {
				d = d[:strings.LastIndex(d, "/")]
				if strings.HasPrefix(d, prefix) {
					seen[d] = true
				}
			}
		}
		dirs := make([]string, 0, len(seen))
		for d := range seen {
			dirs = append(dirs, d)
		}
		sort.Strings(dirs)
		out := make([]any, len(dirs))
		for i, d := range dirs {
			out[i] = d
		}
		return out
	case protocol.CmdFileEnvs:
		var out []any
		for _, e := range fc.Envs() {
			out = append(out, e)
		}
		return orList(out)
	}
	return []any{}
}

// readChunk reads the chunkSize bytes of path at loc (fewer at the
// end, none past it), as roots.serve_file seeks and reads, so a large
// file is not read whole for each of its chunks.
func readChunk(path string, loc int) ([]byte, bool) {
	if path == "" || loc < 0 {
		return nil, false
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, false
	}
	buf := make([]byte, max(0, min(int64(chunkSize), st.Size()-int64(loc))))
	n, err := f.ReadAt(buf, int64(loc))
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, false
	}
	return buf[:n], true
}

func orList(l []any) []any {
	if l == nil {
		return []any{}
	}
	return l
}
