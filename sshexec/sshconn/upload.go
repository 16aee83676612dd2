package sshconn

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path"

	"github.com/pkg/sftp"
)

// sftpChunk is the SFTP write size. OpenSSH's sftp-server accepts messages
// up to 256 KiB, so 128 KiB payloads are safe and cut round trips fourfold
// against pkg/sftp's 32 KiB default.
const sftpChunk = 128 << 10

// sftpInFlight is how many writes of one upload are in flight at once.
// One at a time costs a round trip per chunk (34 for the full thin: 1.7 s
// at a 50 ms RTT); many at once cost sshd CPU, which buffers what its
// sftp-server has not yet read and compacts that buffer by copying (64
// in flight, pkg/sftp's default, raised sshd's CPU per cold host by half
// in bench/sshbench; 4 is within its noise).
const sftpInFlight = 4

// SFTP returns the connection's SFTP client, opening it on first use; later
// calls reuse it. Do not close it: Conn.Close does.
func (c *Conn) SFTP() (*sftp.Client, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, fmt.Errorf("open sftp on %s: %w", c.addr, net.ErrClosed)
	}
	if c.sftp != nil {
		return c.sftp, nil
	}
	s, err := sftp.NewClient(c.client,
		sftp.MaxPacketUnchecked(sftpChunk),
		sftp.UseConcurrentWrites(true),
		sftp.MaxConcurrentRequestsPerFile(sftpInFlight))
	if err != nil {
		return nil, c.lostOr("open sftp", err)
	}
	c.sftp = s
	return s, nil
}

// UploadOption adjusts Upload.
type UploadOption func(*uploadOptions)

type uploadOptions struct {
	mkdir    bool
	dirMode  os.FileMode
	chmodDir bool
}

// WithParents makes Upload create missing parent directories with dirMode
// (before the remote umask), like mkdir -p.
func WithParents(dirMode os.FileMode) UploadOption {
	return func(o *uploadOptions) { o.mkdir, o.dirMode = true, dirMode }
}

// WithDir is WithParents that also gives the upload's own directory
// dirMode when it already existed, as a private directory must have.
func WithDir(dirMode os.FileMode) UploadOption {
	return func(o *uploadOptions) { o.mkdir, o.dirMode, o.chmodDir = true, dirMode, true }
}

// Upload copies r to remotePath with mode, atomically: the data goes to
// ".<name>.tmp-<random>" in the same directory (mode 0600 while written),
// which is closed, chmodded and renamed onto remotePath. A reader, a
// cancelled ctx or a dropped connection therefore never leaves a partial
// file at remotePath; the temp file is removed on failure when the
// connection still allows it. ctx is checked between chunks; a server that
// stalls mid-write is unblocked by Close.
func (c *Conn) Upload(ctx context.Context, r io.Reader, remotePath string, mode os.FileMode, opts ...UploadOption) error {
	var o uploadOptions
	for _, opt := range opts {
		opt(&o)
	}
	s, err := c.SFTP()
	if err != nil {
		return err
	}
	if o.mkdir {
		made, err := mkdirAll(s, path.Dir(remotePath), o.dirMode)
		if err == nil && !made && o.chmodDir {
			err = s.Chmod(path.Dir(remotePath), o.dirMode)
		}
		if err != nil {
			return c.lostOr("upload "+remotePath, err)
		}
	}
	tmp := path.Join(path.Dir(remotePath), "."+path.Base(remotePath)+".tmp-"+randomSuffix())
	if err := writeTemp(ctx, s, tmp, r, mode); err != nil {
		s.Remove(tmp)
		return c.uploadErr(ctx, remotePath, err)
	}
	if err := renameOver(s, tmp, remotePath); err != nil {
		s.Remove(tmp)
		return c.uploadErr(ctx, remotePath, err)
	}
	return nil
}

func (c *Conn) uploadErr(ctx context.Context, remotePath string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("upload %s on %s: %w", remotePath, c.addr, context.Cause(ctx))
	}
	return c.lostOr("upload "+remotePath, err)
}

func writeTemp(ctx context.Context, s *sftp.Client, tmp string, r io.Reader, mode os.FileMode) error {
	f, err := s.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL)
	if err != nil {
		return err
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := f.ReadFrom(ctxReader{ctx, r}); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return s.Chmod(tmp, mode)
}

// renameOver replaces dst with src: atomically with posix-rename when the
// server has it (OpenSSH does), else by remove then rename, where a reader
// may briefly see no file but never a partial one.
func renameOver(s renamer, src, dst string) error {
	if _, ok := s.HasExtension("posix-rename@openssh.com"); ok {
		return s.PosixRename(src, dst)
	}
	if err := s.Remove(dst); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return s.Rename(src, dst)
}

// renamer is the part of *sftp.Client renameOver needs.
type renamer interface {
	HasExtension(name string) (string, bool)
	PosixRename(oldname, newname string) error
	Rename(oldname, newname string) error
	Remove(path string) error
}

// mkdirAll is sftp's MkdirAll with a mode on the directories it creates.
func mkdirAll(s *sftp.Client, dir string, mode os.FileMode) (made bool, err error) {
	if st, err := s.Stat(dir); err == nil {
		if !st.IsDir() {
			return false, fmt.Errorf("mkdir %s: not a directory", dir)
		}
		return false, nil
	}
	if parent := path.Dir(dir); parent != dir {
		if _, err := mkdirAll(s, parent, mode); err != nil {
			return false, err
		}
	}
	if err := s.Mkdir(dir); err != nil {
		// Lost a race with another creator: fine if it is a directory now.
		if st, serr := s.Stat(dir); serr == nil && st.IsDir() {
			return false, nil
		}
		return false, err
	}
	return true, s.Chmod(dir, mode)
}

// MkdirAll creates dir and its missing parents with mode.
func (c *Conn) MkdirAll(ctx context.Context, dir string, mode os.FileMode) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("mkdir %s on %s: %w", dir, c.addr, context.Cause(ctx))
	}
	s, err := c.SFTP()
	if err != nil {
		return err
	}
	if _, err := mkdirAll(s, dir, mode); err != nil {
		return c.lostOr("mkdir "+dir, err)
	}
	return nil
}

// Stat stats a remote path; a missing path matches fs.ErrNotExist.
func (c *Conn) Stat(ctx context.Context, p string) (fs.FileInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("stat %s on %s: %w", p, c.addr, context.Cause(ctx))
	}
	s, err := c.SFTP()
	if err != nil {
		return nil, err
	}
	st, err := s.Stat(p)
	if err != nil {
		return nil, c.lostOr("stat "+p, err)
	}
	return st, nil
}

// Remove removes a remote file or empty directory; a missing path matches
// fs.ErrNotExist.
func (c *Conn) Remove(ctx context.Context, p string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("remove %s on %s: %w", p, c.addr, context.Cause(ctx))
	}
	s, err := c.SFTP()
	if err != nil {
		return err
	}
	if err := s.Remove(p); err != nil {
		return c.lostOr("remove "+p, err)
	}
	return nil
}

func randomSuffix() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// ctxReader stops a copy between reads once ctx has ended.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (cr ctxReader) Read(p []byte) (int, error) {
	if err := cr.ctx.Err(); err != nil {
		return 0, context.Cause(cr.ctx)
	}
	return cr.r.Read(p)
}

// Size tells sftp.File.ReadFrom how much is left to send, so that it
// pipelines the writes instead of waiting for each one's reply (a round
// trip per 128 KiB); -1, for a source of unknown size, pipelines too.
func (cr ctxReader) Size() int64 {
	switch r := cr.r.(type) {
	case interface{ Len() int }:
		return int64(r.Len())
	case io.Seeker:
		cur, err := r.Seek(0, io.SeekCurrent)
		if err != nil {
			return -1
		}
		end, err := r.Seek(0, io.SeekEnd)
		if err != nil {
			return -1
		}
		if _, err := r.Seek(cur, io.SeekStart); err != nil {
			return -1
		}
		return end - cur
	}
	return -1
}
