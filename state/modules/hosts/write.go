package hosts

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
)

// readLines returns the file's lines with their newlines, creating an
// empty file when there is none (_get_or_create_hostfile).
func readLines(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.WriteFile(path, nil, 0o644); err != nil {
			return nil, modules.Errorf("create hosts file: %w", err)
		}
		return nil, nil
	}
	if err != nil {
		return nil, modules.Errorf("read hosts file: %w", err)
	}
	return strings.SplitAfter(string(b), "\n"), nil
}

func setHost(_ context.Context, c *modules.Call) (any, error) {
	path := File(c.Env)
	lines, err := readLines(path)
	if err != nil {
		return nil, err
	}
	ip, alias := c.Str("ip"), c.Str("alias")
	add := ip + "\t\t" + alias + "\n"
	if comment := c.Str("comment"); modules.Truthy(c.Arg("comment")) {
		add = ip + "\t\t" + alias + "\t\t# " + comment + "\n"
	}
	if strings.TrimSpace(alias) == "" {
		add = ""
	}
	done := false
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "#") || strings.Fields(t)[0] != ip {
			continue
		}
		lines[i] = ""
		if !done {
			lines[i], done = add, true
		}
	}
	if !done {
		if n := len(lines); n > 0 && lines[n-1] != "" && !strings.HasSuffix(lines[n-1], "\n") {
			lines[n-1] += "\n"
		}
		lines = append(lines, add)
	}
	return true, WriteAtomic(path, []byte(strings.Join(lines, "")))
}

func rmHost(_ context.Context, c *modules.Call) (any, error) {
	hosts, err := listHosts(c)
	if err != nil {
		return nil, err
	}
	ip, alias := c.Str("ip"), c.Str("alias")
	if !hasPair(hosts, ip, c.Arg("alias")) {
		return true, nil
	}
	path := File(c.Env)
	lines, err := readLines(path)
	if err != nil {
		return nil, err
	}
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		info, comment, hasComment := strings.Cut(t, "#")
		comps := strings.Fields(info)
		if len(comps) == 0 || comps[0] != ip {
			continue
		}
		line := comps[0] + "\t\t"
		for _, a := range comps[1:] {
			if a != alias {
				line += a + " "
			}
		}
		switch {
		case strings.TrimSpace(line) == ip:
			lines[i] = ""
		case hasComment && strings.TrimLeft(comment, " \t") != "":
			lines[i] = line + "# " + strings.TrimLeft(comment, " \t") + "\n"
		default:
			lines[i] = line + "\n"
		}
	}
	return true, WriteAtomic(path, []byte(strings.Join(lines, "")))
}

func addHost(_ context.Context, c *modules.Call) (any, error) {
	if _, err := readLines(File(c.Env)); err != nil {
		return nil, err
	}
	hosts, err := listHosts(c)
	if err != nil {
		return nil, err
	}
	ip := c.Str("ip")
	if hasPair(hosts, ip, c.Arg("alias")) {
		return true, nil
	}
	e, _ := hosts.Value(ip).(*ordered.Map)
	if e == nil {
		e = ordered.New()
		hosts.Set(ip, e)
	}
	a, _ := e.Value("aliases").([]any)
	e.Set("aliases", append(a, c.Str("alias")))
	return true, writeHosts(File(c.Env), hosts)
}

func setComment(_ context.Context, c *modules.Call) (any, error) {
	if _, err := readLines(File(c.Env)); err != nil {
		return nil, err
	}
	hosts, err := listHosts(c)
	if err != nil {
		return nil, err
	}
	e, ok := hosts.Value(c.Str("ip")).(*ordered.Map)
	if !ok {
		return false, nil
	}
	if e.Value("comment") == c.Str("comment") {
		return true, nil
	}
	e.Set("comment", c.Str("comment"))
	return true, writeHosts(File(c.Env), hosts)
}

// Format renders parsed hosts as Salt's _write_hosts does: one line per
// address, comment lines in their places, every line newline-terminated.
func Format(hosts *ordered.Map) string {
	var b strings.Builder
	hosts.Range(func(k, v any) bool {
		ip := ordered.KeyString(k)
		var line string
		if strings.HasPrefix(ip, "comment") {
			for _, x := range asList(v) {
				line += ordered.KeyString(x)
			}
		} else if e, ok := v.(*ordered.Map); ok {
			var names []string
			for _, a := range asList(e.Value("aliases")) {
				names = append(names, ordered.KeyString(a))
			}
			line = ip + "\t\t" + strings.Join(names, " ")
			if cm, ok := e.Get("comment"); ok {
				line += "\t\t# " + ordered.KeyString(cm)
			}
		}
		if strings.TrimSpace(line) != "" {
			b.WriteString(strings.TrimSpace(line) + "\n")
		}
		return true
	})
	return b.String()
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func writeHosts(path string, hosts *ordered.Map) error {
	return WriteAtomic(path, []byte(Format(hosts)))
}

// WriteAtomic replaces path with data through a temporary file in the
// same directory, keeping the file's mode. When path cannot be replaced
// by rename (a bind-mounted /etc/hosts gives EBUSY) it is rewritten in
// place instead.
func WriteAtomic(path string, data []byte) error {
	mode := fs.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".brine-*")
	if err != nil {
		return modules.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return modules.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return modules.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return modules.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return modules.Errorf("write %s: %w", path, err)
	}
	err = os.Rename(tmp.Name(), path)
	if errors.Is(err, syscall.EBUSY) || errors.Is(err, syscall.EXDEV) {
		err = os.WriteFile(path, data, mode)
	}
	if err != nil {
		return modules.Errorf("write %s: %w", path, err)
	}
	return nil
}
