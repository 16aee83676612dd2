package protocol

import (
	"fmt"

	"github.com/brinesalt/brine/internal/ordered"
)

// Fileserver commands a minion sends as "aes" requests
// (salt/fileclient.py RemoteClient); the master answers them from
// salt/fileserver.
const (
	CmdServeFile         = "_serve_file"
	CmdFileHash          = "_file_hash"
	CmdFileFind          = "_file_find"
	CmdFileList          = "_file_list"
	CmdFileListEmptyDirs = "_file_list_emptydirs"
	CmdDirList           = "_dir_list"
	CmdSymlinkList       = "_symlink_list"
	CmdFileEnvs          = "_file_envs"
	CmdMasterOpts        = "_master_opts"
	// CmdMasterTops asks for the master_tops (external top) matches of
	// a minion (RemoteClient.master_tops): {cmd, id, opts[, grains]}.
	CmdMasterTops = "_master_tops"
)

// Mine commands a minion sends as "aes" requests (salt/modules/mine.py):
// _mine {cmd, id, data[, clear]}, _mine_get {cmd, id, tgt, fun,
// tgt_type}, _mine_delete {cmd, id, fun}, _mine_flush {cmd, id}.
const (
	CmdMine       = "_mine"
	CmdMineGet    = "_mine_get"
	CmdMineDelete = "_mine_delete"
	CmdMineFlush  = "_mine_flush"
)

// ServeFileRequest asks for the chunk of path starting at Loc
// (RemoteClient.get_file): {path, saltenv, cmd, [gzip], loc}.
type ServeFileRequest struct {
	Path    string // salt:// path without the scheme
	Saltenv string
	Gzip    int // compression level, 0 for none
	Loc     int
}

// SaltMap returns the load in Salt's key order.
func (r *ServeFileRequest) SaltMap() *ordered.Map {
	m := ordered.FromPairs("path", r.Path, "saltenv", r.Saltenv, "cmd", CmdServeFile)
	if r.Gzip != 0 {
		m.Set("gzip", r.Gzip)
	}
	m.Set("loc", r.Loc)
	return m
}

// ServeFileReply is the master's chunk (fileserver roots.serve_file):
// {"data", "dest", ["gzip"]}; empty data ends the file, empty dest means
// the file was not found.
type ServeFileReply struct {
	Data []byte
	Dest string
	Gzip int
}

// SaltMap returns the reply in Salt's key order.
func (r *ServeFileReply) SaltMap() *ordered.Map {
	m := ordered.FromPairs("data", r.Data, "dest", r.Dest)
	if r.Gzip != 0 {
		m.Set("gzip", r.Gzip)
	}
	return m
}

// ParseServeFileReply reads a _serve_file reply. Data that happened to be
// UTF-8 arrives as text and is returned as its bytes.
func ParseServeFileReply(v any) (*ServeFileReply, error) {
	m, ok := v.(*ordered.Map)
	if !ok {
		return nil, fmt.Errorf("parse _serve_file reply: %T: %w", v, ErrBadLoad)
	}
	r := &ServeFileReply{}
	r.Data, _ = AsBytes(m.Value("data"))
	r.Dest, _ = m.Value("dest").(string)
	r.Gzip, _ = AsInt(m.Value("gzip"))
	return r, nil
}

// FileLoad builds the other fileserver loads in Salt's key order:
// _file_hash and _file_find take path and saltenv ({path, saltenv, cmd});
// the list commands take saltenv and prefix ({saltenv, prefix, cmd});
// _file_envs and _master_opts take nothing ({cmd}).
func FileLoad(cmd, path, saltenv, prefix string) (*ordered.Map, error) {
	switch cmd {
	case CmdFileHash, CmdFileFind:
		return ordered.FromPairs("path", path, "saltenv", saltenv, "cmd", cmd), nil
	case CmdFileList, CmdFileListEmptyDirs, CmdDirList, CmdSymlinkList:
		return ordered.FromPairs("saltenv", saltenv, "prefix", prefix, "cmd", cmd), nil
	case CmdFileEnvs, CmdMasterOpts:
		return ordered.FromPairs("cmd", cmd), nil
	}
	return nil, fmt.Errorf("file load for %q: unknown command: %w", cmd, ErrBadLoad)
}
