// Command gofloor is the benchmark floor for salt-ssh: the least a Go
// program can do to run `true` on every host — one x/crypto/ssh
// connection per host, all hosts at once up to -P, one exec, no thin
// binary, no result parsing. Brine's salt-ssh is measured against it.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
)

func main() {
	hostsFile := flag.String("hosts", "", "file of host:port lines")
	keyFile := flag.String("key", "", "private key")
	user := flag.String("user", "root", "login user")
	cmd := flag.String("cmd", "true", "command to run")
	par := flag.Int("P", 100, "parallelism")
	flag.Parse()
	if err := run(*hostsFile, *keyFile, *user, *cmd, *par); err != nil {
		fmt.Fprintln(os.Stderr, "gofloor:", err)
		os.Exit(1)
	}
}

func run(hostsFile, keyFile, user, cmd string, par int) error {
	pem, err := os.ReadFile(keyFile)
	if err != nil {
		return err
	}
	signer, err := ssh.ParsePrivateKey(pem)
	if err != nil {
		return err
	}
	f, err := os.Open(hostsFile)
	if err != nil {
		return err
	}
	defer f.Close()
	var hosts []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if h := strings.TrimSpace(sc.Text()); h != "" {
			hosts = append(hosts, h)
		}
	}
	cfg := &ssh.ClientConfig{User: user, Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: ssh.InsecureIgnoreHostKey(), Timeout: 30 * time.Second}
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	var mu sync.Mutex
	failed := 0
	for _, h := range hosts {
		sem <- struct{}{}
		wg.Add(1)
		go func(h string) {
			defer func() { <-sem; wg.Done() }()
			if err := one(context.Background(), h, cfg, cmd); err != nil {
				mu.Lock()
				failed++
				mu.Unlock()
				fmt.Fprintln(os.Stderr, h, err)
			}
		}(h)
	}
	wg.Wait()
	if failed > 0 {
		return fmt.Errorf("%d hosts failed", failed)
	}
	return nil
}

func one(_ context.Context, addr string, cfg *ssh.ClientConfig, cmd string) error {
	c, err := net.DialTimeout("tcp", addr, cfg.Timeout)
	if err != nil {
		return err
	}
	conn, chans, reqs, err := ssh.NewClientConn(c, addr, cfg)
	if err != nil {
		return err
	}
	client := ssh.NewClient(conn, chans, reqs)
	defer client.Close()
	s, err := client.NewSession()
	if err != nil {
		return err
	}
	defer s.Close()
	return s.Run(cmd)
}
