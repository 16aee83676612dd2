package sshconn

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"strings"
	"sync"

	"github.com/brinesalt/brine/internal/logattr"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
)

// auth is the authentication of one dial: the methods handed to x/crypto,
// what they did (for classifying a failure), and the agent connection to
// close afterwards.
type auth struct {
	methods []ssh.AuthMethod
	agent   net.Conn

	mu        sync.Mutex
	keys      int      // public keys offered
	password  bool     // the password was sent (password or keyboard-interactive)
	messages  []string // banners and keyboard-interactive instructions
	pwOffered bool     // a password was configured
}

func (a *auth) close() {
	if a.agent != nil {
		a.agent.Close()
	}
}

func (a *auth) note(f func()) {
	a.mu.Lock()
	f()
	a.mu.Unlock()
}

// banner records what the server says before authentication: sshd's
// Banner, or PAM telling that the account is locked or expired.
func (a *auth) banner(msg string) error {
	if msg = strings.TrimSpace(msg); msg != "" {
		a.note(func() { a.messages = append(a.messages, msg) })
	}
	return nil
}

// AuthMethods builds the authentication methods Dial uses: Config.Auth if
// set, else public keys (Signers, the Priv files with their certificates,
// then ssh-agent keys) followed by password and keyboard-interactive when
// Password is set. It connects to the agent to list its keys; use Dial,
// which closes that connection, rather than keeping the methods.
func (c *Config) AuthMethods() ([]ssh.AuthMethod, error) {
	a, err := c.buildAuth()
	if err != nil {
		return nil, err
	}
	return a.methods, nil
}

func (c *Config) buildAuth() (*auth, error) {
	a := &auth{pwOffered: c.Password != ""}
	if len(c.Auth) > 0 {
		a.methods = c.Auth
		return a, nil
	}
	signers, err := c.signers(a)
	if err != nil {
		a.close()
		return nil, err
	}
	if len(signers) > 0 {
		a.methods = append(a.methods, ssh.PublicKeysCallback(func() ([]ssh.Signer, error) {
			a.note(func() { a.keys = len(signers) })
			return signers, nil
		}))
	}
	if c.Password != "" {
		pw := c.Password
		a.methods = append(a.methods,
			ssh.PasswordCallback(func() (string, error) {
				a.note(func() { a.password = true })
				return pw, nil
			}),
			ssh.RetryableAuthMethod(ssh.KeyboardInteractive(a.answerWithPassword(pw)), 2))
	}
	if len(a.methods) == 0 {
		a.close()
		if c.AgentSocket != "" {
			return nil, &AgentError{Socket: c.AgentSocket, Err: ErrNoAgentKeys}
		}
		return nil, fmt.Errorf("connect %s: no authentication configured (set priv or passwd)", c.Host)
	}
	return a, nil
}

// answerWithPassword answers every hidden keyboard-interactive prompt with
// the password, which is what sshd's PAM "Password:" prompt wants, and
// records the server's instructions (PAM's account messages).
func (a *auth) answerWithPassword(pw string) ssh.KeyboardInteractiveChallenge {
	return func(_, instruction string, questions []string, echos []bool) ([]string, error) {
		answers := make([]string, len(questions))
		hidden := false
		for i := range questions {
			if !echos[i] {
				answers[i] = pw
				hidden = true
			}
		}
		a.note(func() {
			if s := strings.TrimSpace(instruction); s != "" {
				a.messages = append(a.messages, s)
			}
			if hidden {
				a.password = true
			}
		})
		return answers, nil
	}
}

// signers gathers the public-key identities in OpenSSH's order: explicit
// Signers, the Priv files (each preceded by its certificate when one
// exists), then the agent's keys. With IdentitiesOnly the agent keys are
// limited to the public halves of configured identities; an encrypted Priv
// file without a passphrase is served by the agent when the agent holds it.
func (c *Config) signers(a *auth) ([]ssh.Signer, error) {
	agentSigners, err := c.agentSigners(a)
	if err != nil {
		return nil, err
	}
	certs, err := loadCertificates(c.CertificateFiles)
	if err != nil {
		return nil, err
	}
	var out []ssh.Signer
	var identities []ssh.PublicKey
	add := func(s ssh.Signer) {
		for _, cert := range certsFor(certs, s.PublicKey()) {
			if cs, err := ssh.NewCertSigner(cert, s); err == nil {
				out = append(out, cs)
			}
		}
		out = append(out, s)
		identities = append(identities, s.PublicKey())
	}
	for _, s := range c.Signers {
		add(s)
	}
	for _, p := range c.Priv {
		own, err := loadCertificates(existing(p + "-cert.pub"))
		if err != nil {
			return nil, err
		}
		certs = append(certs, own...)
		s, err := loadSigner(p, c.PrivPassphrase)
		var pe *PassphraseError
		if errors.As(err, &pe) && !pe.Incorrect {
			if as := agentHolds(agentSigners, p+".pub"); as != nil {
				identities = append(identities, as.PublicKey())
				continue
			}
		}
		if err != nil {
			return nil, err
		}
		add(s)
	}
	for _, s := range agentSigners {
		pub := s.PublicKey()
		if cert, ok := pub.(*ssh.Certificate); ok {
			pub = cert.Key
		}
		if c.IdentitiesOnly && len(c.Priv)+len(c.Signers) > 0 && !containsKey(identities, pub) {
			continue
		}
		if containsKey(publicKeys(out), s.PublicKey()) {
			continue
		}
		if _, isCert := s.PublicKey().(*ssh.Certificate); !isCert {
			for _, cert := range certsFor(certs, pub) {
				if cs, err := ssh.NewCertSigner(cert, s); err == nil {
					out = append(out, cs)
				}
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// agentSigners connects to the agent and lists its keys. A configured but
// unreachable agent is an error only when nothing else can authenticate.
func (c *Config) agentSigners(a *auth) ([]ssh.Signer, error) {
	if c.AgentSocket == "" {
		return nil, nil
	}
	alone := len(c.Signers)+len(c.Priv) == 0 && c.Password == ""
	conn, err := net.Dial("unix", c.AgentSocket)
	if err != nil {
		if alone {
			return nil, &AgentError{Socket: c.AgentSocket, Err: err}
		}
		c.logger().Debug("ssh-agent unreachable; not using it", LogKeyHost, c.Host, logattr.Err, err)
		return nil, nil
	}
	a.agent = conn
	signers, err := agent.NewClient(conn).Signers()
	if err != nil {
		return nil, &AgentError{Socket: c.AgentSocket, Err: err}
	}
	if len(signers) == 0 && alone {
		return nil, &AgentError{Socket: c.AgentSocket, Err: ErrNoAgentKeys}
	}
	return signers, nil
}

// agentHolds returns the agent signer for the public key in pubPath.
func agentHolds(signers []ssh.Signer, pubPath string) ssh.Signer {
	data, err := os.ReadFile(pubPath)
	if err != nil {
		return nil
	}
	pub, _, _, _, err := ssh.ParseAuthorizedKey(data)
	if err != nil {
		return nil
	}
	for _, s := range signers {
		if bytes.Equal(s.PublicKey().Marshal(), pub.Marshal()) {
			return s
		}
	}
	return nil
}

// loadCertificates reads OpenSSH certificates (CertificateFile,
// <key>-cert.pub).
func loadCertificates(paths []string) ([]*ssh.Certificate, error) {
	var out []*ssh.Certificate
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, &KeyError{Path: p, Err: err}
		}
		pub, _, _, _, err := ssh.ParseAuthorizedKey(data)
		if err != nil {
			return nil, &KeyError{Path: p, Err: err}
		}
		cert, ok := pub.(*ssh.Certificate)
		if !ok {
			return nil, &KeyError{Path: p, Err: errors.New("not an OpenSSH certificate")}
		}
		out = append(out, cert)
	}
	return out, nil
}

// existing returns the paths that exist, so an absent optional file
// (<key>-cert.pub) is not an error.
func existing(paths ...string) []string {
	var out []string
	for _, p := range paths {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			out = append(out, p)
		}
	}
	return out
}

func certsFor(certs []*ssh.Certificate, pub ssh.PublicKey) []*ssh.Certificate {
	var out []*ssh.Certificate
	for _, c := range certs {
		if bytes.Equal(c.Key.Marshal(), pub.Marshal()) {
			out = append(out, c)
		}
	}
	return out
}

func publicKeys(signers []ssh.Signer) []ssh.PublicKey {
	out := make([]ssh.PublicKey, len(signers))
	for i, s := range signers {
		out[i] = s.PublicKey()
	}
	return out
}

func containsKey(keys []ssh.PublicKey, k ssh.PublicKey) bool {
	m := k.Marshal()
	for _, x := range keys {
		if bytes.Equal(x.Marshal(), m) {
			return true
		}
	}
	return false
}
