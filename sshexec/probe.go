package sshexec

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"time"
)

// maxWaitLine bounds the job a waiting probe (scriptParams.Wait) drops
// from its stdin on a cold host: the shell reads it a byte at a time, so
// a larger job (a state run's lowstate and pillar) takes the classic
// path, where the probe exits and a second session installs and runs.
const maxWaitLine = 16 << 10

// canWait reports whether the job on stdin (after the sudo password
// line, if any) suits a waiting probe: one line, not too long.
func canWait(job []byte) bool {
	return len(job) <= maxWaitLine && bytes.IndexByte(job, '\n') == len(job)-1
}

// attemptWaiting is attempt with a probe that waits on a cold host: the
// job goes on stdin at once, as a warm host reads it; a cold host drops
// it and prints its deploy line ending in waitToken, the thin binary goes
// over SFTP on the same connection, and the go-ahead (goMarker and the
// install command) and the job again follow on the same session, which
// then installs and runs the job. So first contact costs two sessions
// (this one and SFTP), not three, and a warm host waits for nothing.
// ok means r is the host's answer, a deploy failure included.
func (e *Executor) attemptWaiting(ctx context.Context, conn Conn, id string, p scriptParams, payload []byte, tm *Timings) (r Result, stdout string, ok bool) {
	start := time.Now()
	s := startSession(ctx, conn, p.probeScript())
	s.write(payload)
	line, cold := s.deployLine()
	if !cold {
		stdout, stderr, code, err := s.finish(nil)
		tm.Run += time.Since(start)
		return e.answer(id, stdout, stderr, code, err)
	}
	upStart := time.Now()
	d, err := e.deploy(ctx, conn, id, p, line, tm)
	tm.Upload += time.Since(upStart)
	if err != nil {
		s.finish(nil) // the shell reads EOF and exits, running nothing
		return deployFailure(ctx, conn, id, p, err), "", true
	}
	tm.Deployed = true
	runStart := time.Now()
	stdout, stderr, code, err := s.finish(append([]byte(goMarker+" "+d.cmd()+"\n"), payload...))
	tm.Run += upStart.Sub(start) + time.Since(runStart)
	return e.answer(id, stdout, stderr, code, err)
}

// session is one shell session whose stdin the controller writes while
// it runs and whose stdout it watches for a waiting probe's deploy line.
type session struct {
	stdin  *io.PipeWriter
	out    *deployLineWriter
	stderr bytes.Buffer
	done   chan struct{}
	code   int
	err    error
}

// startSession runs script on a new session of conn; its goroutine ends
// with the session, and finish waits for it.
func startSession(ctx context.Context, conn Conn, script string) *session {
	pr, pw := io.Pipe()
	s := &session{stdin: pw, out: &deployLineWriter{line: make(chan string, 1)}, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		s.code, s.err = conn.Run(ctx, script, pr, s.out, &s.stderr)
		// A write the remote will never read fails instead of blocking.
		pr.CloseWithError(io.ErrClosedPipe)
	}()
	return s
}

// write sends data on stdin; an error means the session has ended, and
// its exit says why.
func (s *session) write(data []byte) { _, _ = s.stdin.Write(data) }

// deployLine waits for a waiting probe's deploy line; cold is false when
// the session ended without one.
func (s *session) deployLine() (line string, cold bool) {
	select {
	case line = <-s.out.line:
		return line, true
	case <-s.done:
		select {
		case line = <-s.out.line:
			return line, true
		default:
			return "", false
		}
	}
}

// finish writes data (nil for nothing) on stdin, closes it and waits for
// the session to end. stdout is what the host printed besides the
// waiting probe's deploy line.
func (s *session) finish(data []byte) (stdout, stderr string, code int, err error) {
	if data != nil {
		s.write(data)
	}
	s.stdin.Close()
	<-s.done
	return s.out.output(), s.stderr.String(), s.code, s.err
}

// deployLineWriter collects a session's stdout and sends the first deploy
// line that ends in waitToken on line, once. Other lines, before it (a
// login script's chatter) or after it, stay in the output.
type deployLineWriter struct {
	mu         sync.Mutex
	buf        bytes.Buffer
	scan       int // where the next unscanned line starts
	found      bool
	start, end int // the deploy line's bounds in buf, once found
	line       chan string
}

func (w *deployLineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	for !w.found {
		i := bytes.IndexByte(w.buf.Bytes()[w.scan:], '\n')
		if i < 0 {
			break
		}
		line := string(w.buf.Bytes()[w.scan : w.scan+i])
		if strings.HasPrefix(line, deployMarker+" ") && strings.HasSuffix(line, " "+waitToken) {
			w.found, w.start, w.end = true, w.scan, w.scan+i+1
			w.line <- line
		}
		w.scan += i + 1
	}
	return len(p), nil
}

// output is everything written but the waiting probe's deploy line.
func (w *deployLineWriter) output() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	b := w.buf.Bytes()
	if !w.found {
		return string(b)
	}
	return string(b[:w.start]) + string(b[w.end:])
}
