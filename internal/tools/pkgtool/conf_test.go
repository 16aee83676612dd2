package main

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/brinesalt/brine/internal/config"
)

// optionLine is a commented-out option of a shipped config ("#key: value"
// or the indented lines of its value), as opposed to prose comments.
var optionLine = regexp.MustCompile(`^#([a-z_]+:( .*)?| {2,}[^ ].*)$`)

// uncomment returns the shipped file with every commented-out option
// enabled.
func uncomment(b []byte) string {
	var out strings.Builder
	for _, l := range strings.Split(string(b), "\n") {
		if optionLine.MatchString(l) {
			out.WriteString(strings.TrimPrefix(l, "#") + "\n")
		}
	}
	return out.String()
}

// TestShippedConfigs loads the shipped master and minion files with
// every option uncommented: each must be an option Brine reads (no
// "keeping options Brine does not use" warning) and parse, so the
// commented defaults never advertise what Brine would ignore.
func TestShippedConfigs(t *testing.T) {
	root, _ := filepath.Abs("../../..")
	for _, name := range []string{"master", "minion"} {
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(root, "packaging", "conf", name))
			if err != nil {
				t.Fatal(err)
			}
			body := uncomment(b)
			if strings.Count(body, ":") < 5 {
				t.Fatalf("found almost no options in %s:\n%s", name, body)
			}
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			var logs bytes.Buffer
			log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
			if name == "master" {
				_, err = config.LoadMaster(dir, log)
			} else {
				_, err = config.LoadMinion(dir, log)
			}
			if err != nil {
				t.Fatalf("load %s with every option set:\n%s\n%v", name, body, err)
			}
			if logs.Len() > 0 {
				t.Errorf("%s names options Brine does not use:\n%s", name, logs.String())
			}
		})
	}
}
