package dbtest

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"

	"github.com/go-sql-driver/mysql"
)

// StartMariaDB makes a data directory with mariadb-install-db and
// starts mariadbd on a free loopback port and a socket in it, then
// makes the salt user (password login from anywhere) and database
// through the socket as root.
func StartMariaDB() (*Server, error) {
	install, err := findProgram("mariadb-install-db", "/usr/bin/mysql_install_db")
	if err != nil {
		return nil, err
	}
	mariadbd, err := findProgram("mariadbd", "/usr/sbin/mariadbd", "/usr/sbin/mysqld")
	if err != nil {
		return nil, err
	}
	u, err := serverUser("mysql")
	if err != nil {
		return nil, err
	}
	dir, err := tempDir("brine-mariadb-", u)
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	s := &Server{Kind: "mariadb", Dir: dir, Host: "127.0.0.1", Port: port, User: "salt", Pass: password(), DB: "salt",
		Socket: filepath.Join(dir, "mysqld.sock")}
	data := filepath.Join(dir, "data")
	cmd := exec.Command(install, "--no-defaults", "--datadir="+data, "--auth-root-authentication-method=normal",
		"--skip-test-db", "--skip-name-resolve", "--user="+u.Username)
	asUser(cmd, u)
	if err := runQuiet(cmd); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s.args = []string{mariadbd, "--no-defaults", "--datadir=" + data, "--socket=" + s.Socket, "--port=" + strconv.Itoa(port),
		"--bind-address=127.0.0.1", "--pid-file=" + filepath.Join(dir, "mysqld.pid"), "--skip-name-resolve",
		"--innodb-buffer-pool-size=64M", "--skip-log-bin", "--log-error=" + filepath.Join(dir, "error.log")}
	if err := s.launch(u); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := s.waitReady(s.mariaRoot); err != nil {
		s.Close()
		return nil, err
	}
	if err := s.mariaSetup(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (s *Server) rootDB() (*sql.DB, error) {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr = "root", "unix", s.Socket
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(c), nil
}

func (s *Server) mariaRoot(ctx context.Context) error {
	db, err := s.rootDB()
	if err != nil {
		return err
	}
	defer db.Close()
	return db.PingContext(ctx)
}

// MySQLConfig is a driver config for the salt database over TCP.
func (s *Server) MySQLConfig() *mysql.Config {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.DBName = s.User, s.Pass, s.DB
	cfg.Net, cfg.Addr = "tcp", fmt.Sprintf("127.0.0.1:%d", s.Port)
	return cfg
}

// SQL opens the salt database as a dashboard would: over TCP with the
// password (database/sql, either kind).
func (s *Server) SQL() (*sql.DB, error) {
	if s.Kind == "postgres" {
		return openPG(s)
	}
	c, err := mysql.NewConnector(s.MySQLConfig())
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(c), nil
}

func (s *Server) mariaReady(ctx context.Context) error {
	db, err := s.SQL()
	if err != nil {
		return err
	}
	defer db.Close()
	return db.PingContext(ctx)
}

func (s *Server) mariaSetup() error {
	db, err := s.rootDB()
	if err != nil {
		return err
	}
	defer db.Close()
	for _, q := range []string{
		"CREATE DATABASE salt DEFAULT CHARACTER SET utf8 DEFAULT COLLATE utf8_general_ci",
		"CREATE USER 'salt'@'%' IDENTIFIED BY '" + s.Pass + "'",
		"CREATE USER 'salt'@'localhost' IDENTIFIED BY '" + s.Pass + "'",
		"GRANT ALL ON salt.* TO 'salt'@'%'",
		"GRANT ALL ON salt.* TO 'salt'@'localhost'",
	} {
		if _, err := db.Exec(q); err != nil {
			return fmt.Errorf("mariadb setup: %w", err)
		}
	}
	return s.mariaReady(context.Background())
}
