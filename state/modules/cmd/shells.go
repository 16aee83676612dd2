package cmd

import (
	"context"
	"os"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
)

func init() {
	reg("shells", "List the login shells named in /etc/shells.", "", func(context.Context, *modules.Call) (any, error) {
		return shells("/etc/shells"), nil
	})
	reg("tty", "Write echo to the terminal device (tty0, pts3, …).", `device, echo=""`, tty)
}

func shells(path string) []any {
	out := []any{}
	b, err := os.ReadFile(path)
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, line)
	}
	return out
}

func tty(_ context.Context, c *modules.Call) (any, error) {
	dev := c.Str("device")
	var path string
	switch {
	case strings.HasPrefix(dev, "tty"):
		path = "/dev/" + dev
	case strings.HasPrefix(dev, "pts"):
		path = "/dev/" + strings.Replace(dev, "pts", "pts/", 1)
	default:
		return ordered.FromPairs("Error", "The specified device is not a valid TTY"), nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err == nil {
		_, err = f.WriteString(c.Str("echo"))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return ordered.FromPairs("Error", "Echoing to "+path+" returned error"), nil
	}
	return ordered.FromPairs("Success", "Message was successfully echoed to "+path), nil
}
