package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"sort"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/master"
	"github.com/brinesalt/brine/output"
)

// saltCP is one salt-cp run (salt/cli/cp.py SaltCP).
type saltCP struct {
	o              options
	stdout, stderr io.Writer
	log            *slog.Logger
	chunkSize      int
	tgt            any
	src            []string
	dest           string
	sock           string
	timeout        time.Duration
	// relayIface and relayPort are where salt-cp --relay takes the
	// minions' connections.
	relayIface string
	relayPort  int
}

// run copies and prints {minion: {path: result}}. Like Salt's salt-cp
// it exits 0 whatever the minions answered (SaltCP.run returns
// nothing); 42 for a missing source, 1 for a directory without
// --chunked, 2 for usage errors.
func (c *saltCP) run(ctx context.Context) int {
	var ret *ordered.Map
	code := 0
	switch {
	case c.o.relay:
		ret, code = c.runRelay(ctx)
	case c.o.chunked:
		ret, code = c.runChunked(ctx)
	default:
		ret, code = c.runOldstyle(ctx)
	}
	if ret == nil {
		return code
	}
	out := c.o.out
	if out == "" {
		out = "nested"
	}
	opts := output.Options{}
	if c.o.outIndent != -1000 {
		opts.Indent = output.IndentOf(c.o.outIndent)
	}
	if err := output.Write(c.stdout, out, ret, opts); err != nil {
		fmt.Fprintln(c.stderr, err)
		return 1
	}
	return code
}

func (c *saltCP) request(fun string, arg []any) master.PublishRequest {
	return master.PublishRequest{Tgt: c.tgt, TgtType: c.o.tgtType, Fun: fun, Arg: arg, User: master.LocalUser(), Delimiter: c.o.delimiter}
}

// runOldstyle is SaltCP.run_oldstyle: every source file's contents in
// one cp.recv job. Sources that do not exist are skipped silently and a
// directory is refused, as Salt's _load_files does.
func (c *saltCP) runOldstyle(ctx context.Context) (*ordered.Map, int) {
	files := ordered.New()
	for _, s := range c.src {
		st, err := os.Stat(s)
		if err != nil {
			continue
		}
		if st.IsDir() {
			fmt.Fprintf(c.stdout, "%s is a directory, only files are supported in non-chunked mode. Use \"--chunked\" command line argument.\n", s)
			return nil, 1
		}
		b, err := os.ReadFile(s)
		if err != nil {
			fmt.Fprintf(c.stderr, "The referenced file, %s is not available.\n", s)
			return nil, 42
		}
		files.Set(s, string(b))
	}
	l, err := dialLocal(ctx, c.sock, c.timeout)
	if err != nil {
		fmt.Fprintln(c.stderr, err)
		return nil, 1
	}
	defer l.close()
	ret, _, err := l.cmd(ctx, c.request("cp.recv", []any{files, c.dest}), nil)
	if err != nil {
		fmt.Fprintln(c.stderr, "Error:", err)
		return nil, 1
	}
	return ret, 0
}

// runChunked is SaltCP.run_chunked: each file in chunks, one
// cp.recv_chunked job per chunk, then the empty directories. A
// minion's first error for a file is its result for that file.
func (c *saltCP) runChunked(ctx context.Context) (*ordered.Map, int) {
	files, emptyDirs, code := c.sources()
	if code != 0 {
		return nil, code
	}
	l, err := dialLocal(ctx, c.sock, c.timeout)
	if err != nil {
		fmt.Fprintln(c.stderr, err)
		return nil, 1
	}
	defer l.close()
	isDir := destIsDir(files, emptyDirs, c.dest)
	names := make([]string, 0, len(files))
	for fn := range files {
		names = append(names, fn)
	}
	sort.Strings(names)
	ret := ordered.New()
	for _, fn := range names {
		remote, ok := remotePath(fn, c.src, c.dest, isDir)
		if !ok {
			c.log.Error("Failed to find remote path for " + fn)
			continue
		}
		if err := c.sendFile(ctx, l, fn, remote, files[fn], ret); err != nil {
			fmt.Fprintln(c.stderr, "Error:", err)
			return ret, 1
		}
	}
	return ret, c.makeDirs(ctx, l, emptyDirs, isDir, ret)
}

// sources lists the files and empty directories to copy; a code other
// than 0 is salt-cp's exit: 42 for a missing source.
func (c *saltCP) sources() (map[string]fs.FileMode, []string, int) {
	files, emptyDirs, err := listFiles(c.src)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) && errors.Is(err, errMissing) {
			fmt.Fprintf(c.stderr, "%s does not exist\n", pe.Path)
			return nil, nil, 42
		}
		fmt.Fprintln(c.stderr, err)
		return nil, nil, 1
	}
	return files, emptyDirs, 0
}

// makeDirs creates the empty directories (a None chunk each) and
// returns salt-cp's exit.
func (c *saltCP) makeDirs(ctx context.Context, l *local, emptyDirs []string, isDir bool, ret *ordered.Map) int {
	for _, d := range emptyDirs {
		remote, _ := remotePath(d, c.src, c.dest, isDir)
		got, _, err := l.cmd(ctx, c.request("cp.recv_chunked", []any{remote, nil}), nil)
		if err != nil {
			fmt.Fprintln(c.stderr, "Error:", err)
			return 1
		}
		got.Range(func(id, v any) bool { setResult(ret, id, remote, v); return true })
	}
	return 0
}

func setResult(ret *ordered.Map, id any, remote string, v any) {
	m, _ := ret.Value(id).(*ordered.Map)
	if m == nil {
		m = ordered.New()
		ret.Set(id, m)
	}
	m.Set(remote, v)
}

// sendFile sends one file chunk by chunk. Every chunk names the
// transfer and its offset; the last one carries the file's SHA-256.
// Like Salt, every chunk goes to the whole target; unlike Salt, a
// minion that failed a chunk or did not answer it is not waited for
// again, since its staged copy can no longer complete: one dead minion
// costs one timeout, not one per chunk. When every minion has failed
// the rest of the file is not sent.
func (c *saltCP) sendFile(ctx context.Context, l *local, fn, remote string, mode fs.FileMode, ret *ordered.Map) error {
	f, err := os.Open(fn)
	if err != nil {
		return fmt.Errorf("read %s: %w", fn, err)
	}
	defer f.Close()
	tr := &fileTransfer{id: newTransferID(), remote: remote, ret: ret, failed: map[string]bool{}, firstErr: map[string]any{}}
	pctx, cancel := context.WithCancel(ctx)
	chunks := c.prepare(pctx, f, remote, mode, tr.id)
	defer func() {
		cancel()
		for range chunks {
		}
	}()
	for p := range chunks {
		if p.err != nil {
			return fmt.Errorf("read %s: %w", fn, p.err)
		}
		c.log.Debug(fmt.Sprintf("Copying %s to target '%v' as %s (chunk #%d)", fn, c.tgt, remote, p.index))
		got, minions, err := l.cmd(ctx, c.request("cp.recv_chunked", p.args), tr.failed)
		if err != nil {
			return err
		}
		if !tr.record(got, minions, p.index, c.chunkSize) || p.last {
			tr.finish()
			return nil
		}
	}
	return context.Cause(ctx)
}

// preparedChunk is one chunk's job arguments, or why it could not be
// made.
type preparedChunk struct {
	index int
	args  []any
	last  bool
	err   error
}

// prepare reads, hashes and compresses the chunks of f one or two ahead
// of the sender, so that gzip works while the minions handle the chunk
// before. The channel closes after the last chunk, an error, or ctx.
func (c *saltCP) prepare(ctx context.Context, f io.Reader, remote string, mode fs.FileMode, id string) <-chan preparedChunk {
	out := make(chan preparedChunk, 2)
	go func() {
		defer close(out)
		h := sha256.New()
		var offset int64
		cur, err := readChunk(f, c.chunkSize)
		for index := 1; ; index++ {
			var next []byte
			if err == nil {
				next, err = readChunk(f, c.chunkSize)
			}
			p := preparedChunk{index: index, err: err}
			if err == nil {
				p.last = len(next) == 0
				h.Write(cur)
				p.args, p.err = c.chunkArgs(remote, cur, index > 1, mode, id, offset, p.last, h)
			}
			select {
			case out <- p:
			case <-ctx.Done():
				return
			}
			if p.err != nil || p.last {
				return
			}
			offset += int64(len(cur))
			cur = next
		}
	}()
	return out
}

// fileTransfer is the state of one file's chunked copy.
type fileTransfer struct {
	id, remote string
	ret        *ordered.Map
	failed     map[string]bool
	firstErr   map[string]any
}

// record takes one chunk's answers and reports whether any minion can
// still complete the file. No answer at all from minions still in the
// running is Salt's "Publish failed".
func (t *fileTransfer) record(got *ordered.Map, minions []string, index, chunkSize int) bool {
	alive := 0
	for _, id := range minions {
		if !t.failed[id] {
			alive++
		}
	}
	if got.Len() == 0 && alive > 0 {
		msg := "Publish failed."
		if index > 1 {
			msg += " File partially transferred."
		}
		msg += fmt.Sprintf(" It may be necessary to decrease salt_cp_chunk_size (current value: %d)", chunkSize)
		for _, id := range minions {
			setResult(t.ret, id, t.remote, msg)
		}
		return false
	}
	for _, id := range minions {
		v, answered := got.Get(id)
		if answered {
			setResult(t.ret, id, t.remote, v)
		}
		if _, seen := t.firstErr[id]; answered && v != true && !seen {
			t.firstErr[id] = v
		}
		if !answered || v != true {
			t.failed[id] = true
		}
	}
	return len(t.failed) < len(minions)
}

// finish puts each minion's first error in place of its later answers.
func (t *fileTransfer) finish() {
	for id, v := range t.firstErr {
		setResult(t.ret, id, t.remote, v)
	}
}

// chunkArgs are cp.recv_chunked's arguments: Salt's dest, chunk,
// append, compressed and mode, and Brine's transfer, offset and hash.
// All but dest go as keywords: the minion reads a positional string of
// the form "name=value" as a keyword argument, and a base64 chunk of
// plain text can look just like that (Salt's own salt-cp trips on it).
func (c *saltCP) chunkArgs(remote string, data []byte, appendTo bool, mode fs.FileMode, transfer string, offset int64, last bool, h hash.Hash) ([]any, error) {
	compressed := !c.o.noCompression
	if compressed {
		var err error
		if data, err = gzipChunk(data); err != nil {
			return nil, err
		}
	}
	kw := ordered.FromPairs("__kwarg__", true, "chunk", base64.StdEncoding.EncodeToString(data), "append", appendTo,
		"compressed", compressed, "mode", int(mode), "transfer", transfer, "offset", offset)
	if last {
		kw.Set("hash", "sha256:"+hex.EncodeToString(h.Sum(nil)))
	}
	return []any{remote, kw}, nil
}

// readChunk reads up to n bytes; fewer only at the end of the file.
func readChunk(r io.Reader, n int) ([]byte, error) {
	buf := make([]byte, n)
	k, err := io.ReadFull(r, buf)
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		err = nil
	}
	return buf[:k], err
}

// gzipChunk is salt.utils.gzip_util.compress_file for one chunk: a
// whole gzip stream at compression level 9.
func gzipChunk(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	w, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(b); err != nil {
		return nil, fmt.Errorf("compress chunk: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("compress chunk: %w", err)
	}
	return buf.Bytes(), nil
}

func newTransferID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
