package sshtest

import (
	"encoding/binary"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
)

// session is one session channel: requests configure it until "exec" or
// "subsystem" starts the work.
type session struct {
	srv    *Server
	ch     ssh.Channel
	budget *dropBudget
	env    []string
	pty    bool
	term   string

	mu      sync.Mutex
	started bool
	proc    *os.Process
	done    chan struct{} // closed when the started work has finished
}

func (s *Server) serveSession(nc ssh.NewChannel, budget *dropBudget) {
	ch, reqs, err := nc.Accept()
	if err != nil {
		return
	}
	sess := &session{srv: s, ch: ch, budget: budget, done: make(chan struct{})}
	for req := range reqs {
		ok := sess.handle(req)
		if req.WantReply {
			req.Reply(ok, nil)
		}
	}
	// The client closed the channel or the connection died: stop the work.
	sess.signal(syscall.SIGKILL)
	if sess.isStarted() {
		<-sess.done
	}
	ch.Close()
}

func (sess *session) handle(req *ssh.Request) bool {
	switch req.Type {
	case "env":
		var kv struct{ Name, Value string }
		if ssh.Unmarshal(req.Payload, &kv) != nil {
			return false
		}
		sess.env = append(sess.env, kv.Name+"="+kv.Value)
		return true
	case "pty-req":
		var p struct {
			Term          string
			Cols, Rows    uint32
			Width, Height uint32
			Modes         string
		}
		if !sess.srv.opts.AllowPTY || ssh.Unmarshal(req.Payload, &p) != nil {
			return false
		}
		sess.srv.ptys.Add(1)
		sess.pty, sess.term = true, p.Term
		return true
	case "exec":
		var e struct{ Command string }
		if ssh.Unmarshal(req.Payload, &e) != nil || !sess.start() {
			return false
		}
		return sess.exec(e.Command)
	case "subsystem":
		var sub struct{ Name string }
		if ssh.Unmarshal(req.Payload, &sub) != nil || sub.Name != "sftp" || !sess.start() {
			return false
		}
		sess.srv.sftpOpens.Add(1)
		go sess.serveSFTP()
		return true
	case "signal":
		var sig struct{ Signal string }
		if ssh.Unmarshal(req.Payload, &sig) == nil {
			if n, ok := signals[sig.Signal]; ok {
				sess.signal(n)
			}
		}
		return false
	}
	return false
}

func (sess *session) start() bool {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if sess.started {
		return false
	}
	sess.started = true
	return true
}

func (sess *session) isStarted() bool {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return sess.started
}

// signal sends sig to the command's process group, if one is running.
func (sess *session) signal(sig syscall.Signal) {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if sess.proc != nil {
		syscall.Kill(-sess.proc.Pid, sig)
	}
}

var signals = map[string]syscall.Signal{
	"ABRT": syscall.SIGABRT, "ALRM": syscall.SIGALRM, "FPE": syscall.SIGFPE,
	"HUP": syscall.SIGHUP, "ILL": syscall.SIGILL, "INT": syscall.SIGINT,
	"KILL": syscall.SIGKILL, "PIPE": syscall.SIGPIPE, "QUIT": syscall.SIGQUIT,
	"SEGV": syscall.SIGSEGV, "TERM": syscall.SIGTERM, "USR1": syscall.SIGUSR1,
	"USR2": syscall.SIGUSR2,
}

func signalName(sig syscall.Signal) string {
	for name, n := range signals {
		if n == sig {
			return name
		}
	}
	return "KILL"
}

// exec starts cmd in its own process group so a signal reaches its
// children; it reports exit-status or exit-signal and closes the channel.
func (sess *session) exec(command string) bool {
	srv := sess.srv
	srv.execs.Add(1)
	srv.mu.Lock()
	srv.commands = append(srv.commands, command)
	srv.mu.Unlock()

	cmd := exec.Command("/bin/sh", "-c", command)
	cmd.Dir = srv.opts.Dir
	cmd.Env = append(append(os.Environ(), srv.opts.Env...), sess.env...)
	cmd.Stdout = sess.ch
	cmd.Stderr = sess.ch.Stderr()
	if sess.pty {
		cmd.Stderr = sess.ch
		cmd.Env = append(cmd.Env, "TERM="+sess.term)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = time.Second
	stdin, err := cmd.StdinPipe()
	if err != nil {
		close(sess.done)
		return false
	}
	sess.mu.Lock()
	err = cmd.Start()
	if err == nil {
		sess.proc = cmd.Process
	}
	sess.mu.Unlock()
	if err != nil {
		close(sess.done)
		return false
	}
	// Not waited for: it ends when the client sends EOF or the channel
	// closes, which serveSession guarantees.
	go func() {
		io.Copy(stdin, sess.ch)
		stdin.Close()
	}()
	go sess.wait(cmd)
	return true
}

func (sess *session) wait(cmd *exec.Cmd) {
	defer close(sess.done)
	cmd.Wait() // the outcome is in ProcessState, also after a WaitDelay timeout
	sess.mu.Lock()
	sess.proc = nil
	sess.mu.Unlock()
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		sess.ch.SendRequest("exit-signal", false, ssh.Marshal(struct {
			Signal     string
			CoreDumped bool
			Error      string
			Lang       string
		}{Signal: signalName(ws.Signal())}))
	} else {
		sess.ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{uint32(ws.ExitStatus())}))
	}
	sess.ch.CloseWrite()
	sess.ch.Close()
}

// serveSFTP serves the subsystem until the client closes it.
func (sess *session) serveSFTP() {
	defer close(sess.done)
	tap := &sftpTap{ReadWriteCloser: sess.ch, srv: sess.srv, budget: sess.budget}
	var opts []sftp.ServerOption
	if sess.srv.opts.Dir != "" {
		opts = append(opts, sftp.WithServerWorkingDirectory(sess.srv.opts.Dir))
	}
	server, err := sftp.NewServer(tap, opts...)
	if err != nil {
		sess.ch.Close()
		return
	}
	server.Serve()
	server.Close()
	sess.ch.Close()
}

// sftpTap watches what the client sends to the SFTP server: it counts
// bytes, spots files opened for writing, and applies the drop budget.
type sftpTap struct {
	io.ReadWriteCloser
	srv    *Server
	budget *dropBudget
	buf    []byte // unparsed tail of the client's packet stream
}

func (t *sftpTap) Read(p []byte) (int, error) {
	n, err := t.ReadWriteCloser.Read(p)
	t.srv.sftpBytesIn.Add(int64(n))
	t.scan(p[:n])
	if t.budget.consume(n) {
		t.budget.drop()
		return 0, io.ErrUnexpectedEOF
	}
	return n, err
}

// SFTP packet types and open flags (draft-ietf-secsh-filexfer-02).
const (
	fxpOpen   = 3
	fxfWrite  = 0x2
	maxPacket = 1 << 20
)

// scan frames packets (uint32 length, byte type, ...) and counts OPENs with
// the write flag.
func (t *sftpTap) scan(p []byte) {
	t.buf = append(t.buf, p...)
	for len(t.buf) >= 5 {
		n := int(binary.BigEndian.Uint32(t.buf))
		if n > maxPacket {
			t.buf = nil // not SFTP as we know it; stop looking
			return
		}
		if len(t.buf) < 4+n {
			return
		}
		if pkt := t.buf[4 : 4+n]; len(pkt) > 0 && pkt[0] == fxpOpen && openForWrite(pkt) {
			t.srv.sftpWrites.Add(1)
		}
		t.buf = t.buf[4+n:]
	}
}

// openForWrite reads an OPEN packet: type, uint32 id, string path, uint32 pflags.
func openForWrite(pkt []byte) bool {
	if len(pkt) < 9 {
		return false
	}
	l := int(binary.BigEndian.Uint32(pkt[5:]))
	rest := pkt[9:]
	if len(rest) < l+4 {
		return false
	}
	return binary.BigEndian.Uint32(rest[l:])&fxfWrite != 0
}
