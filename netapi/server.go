package netapi

import (
	"context"
	"crypto/tls"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/brinesalt/brine/internal/config"
	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/master"
)

// Options wire a Server.
type Options struct {
	Config Config
	// Socket is the master's local socket (master.Options.LocalSocket).
	Socket string
	// Timeout and GatherJobTimeout are the master config's timeout and
	// gather_job_timeout, the local clients' defaults.
	Timeout, GatherJobTimeout time.Duration
	// MasterOpts is the master config as read (failhard, external_auth).
	MasterOpts *ordered.Map
	Log        *slog.Logger
	// MasterConfig is the loaded master config the ssh client runs
	// salt-ssh with, and ConfigDir its directory; nil leaves the ssh
	// client unavailable.
	MasterConfig *config.Master
	ConfigDir    string
}

// Server is salt-api: rest_cherrypy's endpoints over the master's local
// socket.
type Server struct {
	cfg              Config
	log              *slog.Logger
	sock             string
	timeout          time.Duration
	gatherJobTimeout time.Duration
	masterOpts       *ordered.Map
	masterCfg        *config.Master
	configDir        string

	pool     *pool
	hub      *hub
	sessions *sessions
	limit    *limiter
	stats    *stats
	access   io.WriteCloser // the access log, when configured
	errLog   *log.Logger    // the error log (log_error_file, else the logger)
	errFile  io.Closer
	warned   sync.Map // lowstate keys already warned about
	// streams is cancelled when the server stops, ending /events and /ws.
	streams context.Context
	stop    context.CancelFunc
}

// ErrMasterLost is the master's event stream ending: salt-api cannot
// work without its master, so it stops.
var ErrMasterLost = errors.New("the connection to the master was lost")

// New builds a Server; Run serves it.
func New(o Options) (*Server, error) {
	if o.MasterOpts == nil {
		o.MasterOpts = ordered.New()
	}
	s := &Server{cfg: o.Config, log: o.Log, sock: o.Socket, timeout: o.Timeout, gatherJobTimeout: o.GatherJobTimeout,
		masterOpts: o.MasterOpts, masterCfg: o.MasterConfig, configDir: o.ConfigDir, pool: newPool(o.Socket, max(o.Config.ThreadPool, 8)), hub: newHub(),
		sessions: newSessions(), limit: newLimiter(o.Config.ThreadPool, o.Config.SocketQueueSize),
		stats: newStats(o.Config.CollectStats)}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if err := s.openLogs(); err != nil {
		return nil, err
	}
	s.streams, s.stop = context.WithCancel(context.Background())
	return s, nil
}

// openLogs opens log_access_file and log_error_file (0600, appending).
func (s *Server) openLogs() error {
	if p := s.cfg.LogAccessFile; p != "" {
		f, err := os.OpenFile(p, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			return fmt.Errorf("open log_access_file: %w", err)
		}
		s.access = f
	}
	s.errLog = slog.NewLogLogger(s.log.Handler(), slog.LevelError)
	if p := s.cfg.LogErrorFile; p != "" {
		f, err := os.OpenFile(p, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			return fmt.Errorf("open log_error_file: %w", err)
		}
		s.errFile = f
		s.errLog = log.New(f, "", log.LstdFlags)
	}
	return nil
}

// Run connects to the master's event stream, listens and serves until
// ctx ends (nil) or the master goes away (ErrMasterLost).
func (s *Server) Run(ctx context.Context) error {
	defer s.closeLogs()
	ln, err := s.Listen()
	if err != nil {
		return err
	}
	return s.Serve(ctx, ln)
}

// Listen opens the listening socket on host:port, with TLS unless
// disable_ssl.
func (s *Server) Listen() (net.Listener, error) {
	addr := net.JoinHostPort(s.cfg.Host, strconv.Itoa(s.cfg.Port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	if s.cfg.DisableSSL {
		return ln, nil
	}
	tc, err := s.tlsConfig()
	if err != nil {
		ln.Close()
		return nil, err
	}
	return tls.NewListener(ln, tc), nil
}

// tlsConfig loads ssl_crt and ssl_key, with ssl_chain's certificates
// served after the certificate.
func (s *Server) tlsConfig() (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(s.cfg.SSLCrt, s.cfg.SSLKey)
	if err != nil {
		return nil, fmt.Errorf("load ssl_crt/ssl_key: %w", err)
	}
	if s.cfg.SSLChain != "" {
		chain, err := loadChain(s.cfg.SSLChain)
		if err != nil {
			return nil, err
		}
		cert.Certificate = append(cert.Certificate, chain...)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12,
		NextProtos: []string{"h2", "http/1.1"}}, nil
}

// Serve serves on ln. The events connection comes first: without the
// master there is nothing to serve.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	defer s.stop()
	defer s.pool.close()
	evctx, cancelEvents := context.WithCancel(ctx)
	defer cancelEvents()
	ec, err := master.Dial(evctx, s.sock)
	if err != nil {
		ln.Close()
		return err
	}
	defer ec.Close()
	events, err := ec.Events(evctx)
	if err != nil {
		ln.Close()
		return fmt.Errorf("watch the master's events: %w", err)
	}
	lost := make(chan struct{})
	go func() { s.hub.run(events); close(lost) }()
	go s.sweepSessions(evctx)
	srv := s.httpServer()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	s.log.Info("salt-api listening", "address", ln.Addr().String(), "tls", !s.cfg.DisableSSL)
	var result error
	select {
	case <-ctx.Done():
	case <-lost:
		if ctx.Err() == nil {
			result = ErrMasterLost
		}
	case err := <-served:
		result = fmt.Errorf("serve: %w", err)
	}
	s.stop()
	shut, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil {
		srv.Close()
	}
	return result
}

// httpServer is net/http's server with the limits that keep slow
// clients from holding the server: a request's headers must come within
// 10 s and its body within 60 s, an idle keep-alive connection is closed
// after 2 minutes, and (per response, see writeDeadline) a client that
// does not read what it is sent is cut off. Each connection, with its
// TLS handshake, is served by its own goroutine, so an idle or slow
// client never delays another (CherryPy shakes hands in its accept
// loop).
func (s *Server) httpServer() *http.Server {
	return &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    500 << 10, // CherryPy's max_request_header_size
		ErrorLog:          s.errLog,
		BaseContext:       func(net.Listener) context.Context { return s.streams },
	}
}

// sweepSessions removes expired sessions every minute.
func (s *Server) sweepSessions(ctx context.Context) {
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			s.sessions.sweep(now)
		}
	}
}

func (s *Server) closeLogs() {
	if s.access != nil {
		if err := s.access.Close(); err != nil {
			s.log.Warn("close log_access_file", logattr.Err, err)
		}
	}
	if s.errFile != nil {
		s.errFile.Close()
	}
}

// loadChain reads the certificates of ssl_chain (PEM), to be served
// after ssl_crt's.
func loadChain(path string) ([][]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read ssl_chain: %w", err)
	}
	var out [][]byte
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			break
		}
		if blk.Type == "CERTIFICATE" {
			out = append(out, blk.Bytes)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("ssl_chain %s: no PEM certificate in it", path)
	}
	return out, nil
}
