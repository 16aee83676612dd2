package dbtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"

	"github.com/jackc/pgx/v5"
)

// StartPostgres initialises a cluster in a new directory and starts
// postgres on a free loopback port and a socket in that directory, with
// TCP logins by password (scram-sha-256), then makes the salt user and
// database over the socket.
func StartPostgres() (*Server, error) {
	initdb, err := findProgram("initdb", "/usr/lib/postgresql/*/bin/initdb")
	if err != nil {
		return nil, err
	}
	postgres, err := findProgram("postgres", "/usr/lib/postgresql/*/bin/postgres")
	if err != nil {
		return nil, err
	}
	u, err := serverUser("postgres")
	if err != nil {
		return nil, err
	}
	dir, err := tempDir("brine-pg-", u)
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	s := &Server{Kind: "postgres", Dir: dir, Host: "127.0.0.1", Port: port, User: "salt", Pass: password(), DB: "salt", Socket: dir}
	data := filepath.Join(dir, "data")
	cmd := exec.Command(initdb, "-D", data, "-U", "postgres", "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--no-sync")
	asUser(cmd, u)
	if err := runQuiet(cmd); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s.args = []string{postgres, "-D", data, "-k", dir, "-p", strconv.Itoa(port), "-c", "listen_addresses=127.0.0.1",
		"-c", "max_connections=100", "-c", "shared_buffers=64MB", "-c", "log_min_messages=warning"}
	if err := s.launch(u); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := s.waitReady(s.pgSuper); err != nil {
		s.Close()
		return nil, err
	}
	if err := s.pgSetup(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// superConn connects over the socket as the postgres superuser (trust).
func (s *Server) superConn(ctx context.Context) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(fmt.Sprintf("host=%s port=%d user=postgres dbname=postgres", s.Socket, s.Port))
	if err != nil {
		return nil, err
	}
	return pgx.ConnectConfig(ctx, cfg)
}

func (s *Server) pgSuper(ctx context.Context) error {
	c, err := s.superConn(ctx)
	if err != nil {
		return err
	}
	return c.Close(ctx)
}

// pgReady is a password login as salt over TCP.
func (s *Server) pgReady(ctx context.Context) error {
	c, err := pgx.ConnectConfig(ctx, s.PGConfig())
	if err != nil {
		return err
	}
	return c.Close(ctx)
}

// PGConfig is a pgx config for the salt database over TCP.
func (s *Server) PGConfig() *pgx.ConnConfig {
	cfg, _ := pgx.ParseConfig(fmt.Sprintf("host=%s port=%d user=%s dbname=%s", s.Host, s.Port, s.User, s.DB))
	cfg.Password = s.Pass
	return cfg
}

func (s *Server) pgSetup() error {
	ctx := context.Background()
	c, err := s.superConn(ctx)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	// The password goes as a literal in the statement over the socket:
	// CREATE ROLE takes no parameters.
	for _, q := range []string{
		"CREATE ROLE salt LOGIN PASSWORD '" + s.Pass + "'",
		"CREATE DATABASE salt OWNER salt ENCODING 'UTF8'",
	} {
		if _, err := c.Exec(ctx, q); err != nil {
			return fmt.Errorf("postgres setup: %w", err)
		}
	}
	return s.pgReady(ctx)
}
