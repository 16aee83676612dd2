package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brinesalt/brine/internal/config"
)

// TestMasterLinkWithoutMaster: the link names the master's pki_dir,
// ports and local socket from the configuration, and without a running
// master its event stream says what to check.
func TestMasterLinkWithoutMaster(t *testing.T) {
	dir := t.TempDir()
	cfg := config.DefaultMaster(dir)
	cfg.PKIDir = filepath.Join(dir, "pki")
	cfg.SockDir = filepath.Join(dir, "sock")
	link, err := masterLink(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if link.PKIDir != cfg.PKIDir || link.RetPort != 4506 || link.PublishPort != 4505 ||
		link.Socket != filepath.Join(dir, "sock", "brine-master.sock") {
		t.Errorf("link = %+v", link)
	}
	if _, err := link.Events(context.Background()); err == nil || !strings.Contains(err.Error(), "is salt-master running") {
		t.Errorf("events without a master: %v", err)
	}
	if _, err := link.Ping(context.Background(), "web1"); err == nil {
		t.Error("ping without a master succeeded")
	}
}
