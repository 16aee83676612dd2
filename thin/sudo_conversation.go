package thin

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
)

// sudoConversation answers `sudo -S` on a pipe of its own: the password
// when sudo prints sudoPrompt on stderr for the first time, end of file
// when it asks again (the password was refused: sudo gives up at once
// instead of reading the job as its next attempt, and a PAM stack never
// sees the job), and the job, copied from the helper's stdin, once the
// command sudo runs has printed startedLine. The password is dropped as
// soon as sudo has it, or once the command started without asking for it.
type sudoConversation struct {
	password []byte
	job      io.Reader

	mu      sync.Mutex
	stdin   *os.File // the write end of sudo's stdin; nil once closed
	prompts int
}

// run runs cmd (sudo -S -p sudoPrompt ... sudo-started ...) with the
// conversation on its stdin and stderr, the rest of stderr going to
// stderr, and waits for it.
func (c *sudoConversation) run(cmd *exec.Cmd, stderr io.Writer) error {
	defer c.forget()
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("sudo stdin: %w", err)
	}
	c.stdin = w
	watch := &sudoStderr{w: stderr, onPrompt: c.prompt, onStarted: c.started}
	cmd.Stdin, cmd.Stderr = r, watch
	err = cmd.Start()
	r.Close()
	if err != nil {
		c.closeStdin()
		return err
	}
	err = cmd.Wait()
	c.closeStdin()
	if ferr := watch.flush(); err == nil && ferr != nil {
		err = ferr
	}
	return err
}

// prompt answers sudo's password prompt: once with the password, after
// that with end of file.
func (c *sudoConversation) prompt() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.prompts++
	if c.prompts > 1 || c.password == nil || c.stdin == nil {
		c.closeStdinLocked()
		return
	}
	// A pipe holds far more than a password line: this never blocks.
	_, err := c.stdin.Write(append(c.password, '\n'))
	c.forgetLocked()
	if err != nil {
		c.closeStdinLocked()
	}
}

// started hands the job to the command sudo started, which reads it from
// the same pipe sudo read the password from.
func (c *sudoConversation) started() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.forgetLocked()
	w := c.stdin
	if w == nil {
		return
	}
	c.stdin = nil
	// The copy ends with the job's stream, or when the command has exited
	// and closed the pipe; nobody waits for it (see runSudo).
	go func() {
		_, _ = io.Copy(w, c.job)
		w.Close()
	}()
}

// forget overwrites the password in memory.
func (c *sudoConversation) forget() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.forgetLocked()
}

func (c *sudoConversation) forgetLocked() {
	for i := range c.password {
		c.password[i] = 0
	}
	c.password = nil
}

func (c *sudoConversation) closeStdin() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closeStdinLocked()
}

func (c *sudoConversation) closeStdinLocked() {
	if c.stdin != nil {
		c.stdin.Close()
		c.stdin = nil
	}
}

// sudoStderr passes sudo's stderr through to w, taking out the password
// prompts (calling onPrompt for each) and the started line (calling
// onStarted); after the started line everything is the job's own stderr
// and passes untouched.
type sudoStderr struct {
	w         io.Writer
	onPrompt  func()
	onStarted func()

	pending []byte // what may be the start of a prompt or the started line
	started bool
}

// Write is called by exec's copying goroutine only.
func (s *sudoStderr) Write(p []byte) (int, error) {
	if s.started {
		return s.w.Write(p)
	}
	s.pending = append(s.pending, p...)
	for !s.started {
		i, tok := nextToken(s.pending)
		if i < 0 {
			keep := partialToken(s.pending)
			err := s.forward(len(s.pending) - keep)
			return len(p), err
		}
		if err := s.forward(i); err != nil {
			return len(p), err
		}
		s.pending = s.pending[len(tok):]
		if tok == sudoPrompt {
			s.onPrompt()
		} else {
			s.started = true
			s.onStarted()
		}
	}
	err := s.forward(len(s.pending))
	return len(p), err
}

// forward writes the first n pending bytes to w.
func (s *sudoStderr) forward(n int) error {
	if n == 0 {
		return nil
	}
	_, err := s.w.Write(s.pending[:n])
	s.pending = append(s.pending[:0], s.pending[n:]...)
	return err
}

// flush writes what was held back as a possible token start; called once
// the writers are gone.
func (s *sudoStderr) flush() error {
	return s.forward(len(s.pending))
}

// nextToken finds the first prompt or started line in b.
func nextToken(b []byte) (int, string) {
	i, tok := -1, ""
	for _, t := range []string{sudoPrompt, startedLine} {
		if j := bytes.Index(b, []byte(t)); j >= 0 && (i < 0 || j < i) {
			i, tok = j, t
		}
	}
	return i, tok
}

// partialToken is the length of the longest suffix of b that a prompt or
// the started line begins with.
func partialToken(b []byte) int {
	best := 0
	for _, t := range []string{sudoPrompt, startedLine} {
		for n := min(len(b), len(t)-1); n > best; n-- {
			if bytes.HasSuffix(b, []byte(t[:n])) {
				best = n
				break
			}
		}
	}
	return best
}
