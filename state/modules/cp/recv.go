package cp

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/modules/file"
)

// The receiving side of salt-cp (salt/modules/cp.py recv and
// recv_chunked). Brine's salt-cp names a transfer id, and every chunk
// then goes to a hidden staging file beside the destination,
// ".<name>.salt-cp-<transfer>"; the last chunk carries the SHA-256 of
// the whole file, which the minion checks before it renames the staging
// file over the destination. So a destination is either the old file or
// the complete new one, never half a transfer. Without a transfer id
// (Salt's own salt-cp) chunks are written straight into the
// destination, as Salt does.

func init() {
	reg("recv", "Receive small files from salt-cp: {path: contents} written under dest; returns {final path: True|False}.",
		recv, false, req("files"), req("dest"))
	reg("recv_chunked", "Receive one chunk of a salt-cp transfer (base64, optionally gzip-compressed); a None chunk creates the directory dest.",
		recvChunked, false, req("dest"), req("chunk"), opt("append", false), opt("compressed", true), opt("mode", nil),
		opt("transfer", ""), opt("offset", 0), opt("hash", ""))
}

// transferRE keeps transfer ids to names that cannot leave the
// destination's directory.
var transferRE = regexp.MustCompile(`^[0-9A-Za-z_-]{1,64}$`)

var errChunkOrder = errors.New("chunk out of order")

// recv is cp.recv: each file's final path is dest itself when dest names
// a file (or the file's own name), dest/<name> when dest is a
// directory; a missing parent directory gives "Destination unavailable"
// for the whole call. Files are written through a staging file and
// renamed, keeping an existing file's mode.
func recv(_ context.Context, c *modules.Call) (any, error) {
	files, _ := c.Arg("files").(*ordered.Map)
	dest := c.Str("dest")
	ret := ordered.New()
	var unavailable bool
	files.Range(func(k, v any) bool {
		path := ordered.KeyString(k)
		var final string
		switch {
		case filepath.Base(path) == filepath.Base(dest) && !isDir(dest):
			final = dest
		case isDir(dest):
			final = filepath.Join(dest, filepath.Base(path))
		case isDir(filepath.Dir(dest)):
			final = dest
		default:
			unavailable = true
			return false
		}
		data, _ := asBytes(v)
		ret.Set(final, writeStaged(final, data, nil) == nil)
		return true
	})
	if unavailable {
		return "Destination unavailable", nil
	}
	return ret, nil
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// recvChunked is cp.recv_chunked. Errors are returned as Salt's
// message text with the job's retcode set to 1.
func recvChunked(_ context.Context, c *modules.Call) (any, error) {
	fail := func(msg string) (any, error) {
		c.Env.Context["retcode"] = 1
		return msg, nil
	}
	dest := c.Str("dest")
	if c.Arg("chunk") == nil {
		return makeDir(dest, fail)
	}
	raw, ok := asBytes(c.Arg("chunk"))
	if !ok {
		return fail("chunk is not base64 text")
	}
	data, err := base64.StdEncoding.DecodeString(string(raw))
	if err != nil {
		return fail(fmt.Sprintf("chunk is not base64: %v", err))
	}
	if c.Bool("compressed") {
		if data, err = gunzip(data); err != nil {
			return fail(fmt.Sprintf("chunk is not gzip data: %v", err))
		}
	}
	mode, hasMode := modeArg(c.Arg("mode"))
	transfer := c.Str("transfer")
	if transfer == "" {
		return writeDirect(dest, data, c.Bool("append"), mode, hasMode, fail)
	}
	if !transferRE.MatchString(transfer) {
		return fail(fmt.Sprintf("invalid transfer id %q", transfer))
	}
	offset, ok := intArg(c.Arg("offset"))
	if !ok {
		return fail(fmt.Sprintf("offset %v is not a number", c.Arg("offset")))
	}
	if err := stageChunk(dest, transfer, data, c.Bool("append"), offset, c.Str("hash"), modePtr(mode, hasMode)); err != nil {
		return fail(err.Error())
	}
	return true, nil
}

// makeDir creates the empty directory dest (a None chunk).
func makeDir(dest string, fail func(string) (any, error)) (any, error) {
	err := os.MkdirAll(dest, 0o777)
	if err == nil {
		return true, nil
	}
	if st, serr := os.Stat(dest); serr == nil && !st.IsDir() {
		// Salt returns this without setting the retcode.
		return "Path exists and is a file", nil
	}
	return fail(file.PyOSError(err))
}

func asBytes(v any) ([]byte, bool) {
	switch x := v.(type) {
	case string:
		return []byte(x), true
	case []byte:
		return x, true
	}
	return nil, false
}

func intArg(v any) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int64:
		return x, true
	case uint64:
		return int64(x), true
	}
	return 0, false
}

// modeArg is the mode salt-cp sends, st_mode's last four octal digits
// (salt/cli/cp.py _mode), which cp.recv_chunked hands to os.chmod as they
// are: setuid, setgid and sticky bits included.
func modeArg(v any) (fs.FileMode, bool) {
	n, ok := intArg(v)
	return file.PermBits(uint32(n) & 0o7777), ok
}

func modePtr(m fs.FileMode, ok bool) *fs.FileMode {
	if !ok {
		return nil
	}
	return &m
}

// gunzip is salt.utils.gzip_util.uncompress: each chunk is a whole gzip
// stream of its own.
func gunzip(b []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	return io.ReadAll(zr)
}

// writeDirect is Salt's own recv_chunked: the chunk goes straight into
// dest (created with its parent directories on the first chunk,
// appended to after), and the first chunk sets the mode.
func writeDirect(dest string, data []byte, appendTo bool, mode fs.FileMode, hasMode bool, fail func(string) (any, error)) (any, error) {
	flag := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if appendTo {
		flag = os.O_WRONLY | os.O_CREATE | os.O_APPEND
	}
	f, err := os.OpenFile(dest, flag, 0o666)
	if errors.Is(err, fs.ErrNotExist) {
		if merr := os.MkdirAll(filepath.Dir(dest), 0o777); merr != nil {
			return fail(file.PyOSError(merr))
		}
		f, err = os.OpenFile(dest, flag, 0o666)
	}
	if err != nil {
		return fail(file.PyOSError(err))
	}
	_, werr := f.Write(data)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fail(file.PyOSError(werr))
	}
	if !appendTo && hasMode {
		if err := os.Chmod(dest, mode); err != nil {
			return fail(file.PyOSError(err))
		}
	}
	return true, nil
}

func stagingPath(dest, transfer string) string {
	return filepath.Join(filepath.Dir(dest), "."+filepath.Base(dest)+".salt-cp-"+transfer)
}

// stageChunk writes one chunk of a transfer into the staging file: the
// first chunk creates it (and dest's parent directories, as Salt does),
// later ones must start where the file ends. With sum, the chunk is the
// last: the whole file must hash to it, and it is then renamed over
// dest. Any failure removes the staging file.
func stageChunk(dest, transfer string, data []byte, appendTo bool, offset int64, sum string, mode *fs.FileMode) (err error) {
	tmp := stagingPath(dest, transfer)
	defer func() {
		if err != nil {
			_ = os.Remove(tmp)
		}
	}()
	f, err := openStaging(tmp, appendTo, offset)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	if werr == nil && sum != "" {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return errors.New(file.PyOSError(werr))
	}
	if sum == "" {
		return nil
	}
	return finishStaged(tmp, dest, sum, mode)
}

func openStaging(tmp string, appendTo bool, offset int64) (*os.File, error) {
	if !appendTo {
		f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if errors.Is(err, fs.ErrNotExist) {
			if merr := os.MkdirAll(filepath.Dir(tmp), 0o777); merr != nil {
				return nil, errors.New(file.PyOSError(merr))
			}
			f, err = os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		}
		if err != nil {
			return nil, errors.New(file.PyOSError(err))
		}
		return f, nil
	}
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: no transfer in progress at offset %d", errChunkOrder, offset)
	}
	st, err := f.Stat()
	if err == nil && st.Size() != offset {
		err = fmt.Errorf("%w: chunk for offset %d, %d bytes received", errChunkOrder, offset, st.Size())
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// finishStaged checks the staging file against sum ("sha256:<hex>"),
// sets its mode (the given one, else an existing dest's, else 0644 as
// Python's open gives under umask 022) and renames it over dest.
func finishStaged(tmp, dest, sum string, mode *fs.FileMode) error {
	algo, want, ok := strings.Cut(sum, ":")
	if !ok || algo != "sha256" {
		return fmt.Errorf("unsupported hash %q (want sha256:<hex>)", sum)
	}
	got, err := sha256File(tmp)
	if err != nil {
		return errors.New(file.PyOSError(err))
	}
	if !strings.EqualFold(got, want) {
		return fmt.Errorf("hash mismatch for %s: received sha256:%s, sent %s; destination left unchanged", dest, got, sum)
	}
	return renameStaged(tmp, dest, mode)
}

func renameStaged(tmp, dest string, mode *fs.FileMode) error {
	perm := fs.FileMode(0o644)
	if mode != nil {
		perm = *mode
	} else if st, err := os.Stat(dest); err == nil {
		perm = st.Mode().Perm()
	}
	if err := os.Chmod(tmp, perm); err != nil {
		return errors.New(file.PyOSError(err))
	}
	if err := os.Rename(tmp, dest); err != nil {
		return errors.New(file.PyOSError(err))
	}
	return nil
}

func sha256File(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// writeStaged writes a whole file through a staging file (cp.recv).
func writeStaged(dest string, data []byte, mode *fs.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(dest), "."+filepath.Base(dest)+".salt-cp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = renameStaged(tmp, dest, mode)
	}
	if werr != nil {
		_ = os.Remove(tmp)
	}
	return werr
}
