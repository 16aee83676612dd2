package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/saltyaml"
)

// SaltfileEnv is the environment variable naming a Saltfile.
const SaltfileEnv = "SALT_SALTFILE"

// ErrSaltfileNotFound is returned when the Saltfile named by --saltfile
// or SALT_SALTFILE does not exist (Salt: "'<path>' file does not exist.").
var ErrSaltfileNotFound = errors.New("saltfile does not exist")

// Saltfile is one program's section of a Saltfile: a YAML file whose
// top-level keys are program names (salt-ssh, salt, salt-call, …) and
// whose sections map option destinations — the names of Salt's parser
// dests, such as config_dir, ssh_max_procs or roster_file — to values.
type Saltfile struct {
	// Path is the absolute path of the file read.
	Path string
	// Options is the program's section in file order; empty when the file
	// has none.
	Options *ordered.Map
}

// FindSaltfile returns the Saltfile to read, in the order of Salt's
// SaltfileMixIn.process_saltfile (salt/utils/parsers.py): the --saltfile
// flag, else the SALT_SALTFILE environment variable, else ./Saltfile,
// else ~/.salt/Saltfile. A file named by the flag or the variable must
// exist; the two searched ones are optional. "" means there is none to
// read, which includes SALT_SALTFILE set to the empty string (Salt then
// stops looking).
func FindSaltfile(flag string, lookupEnv func(string) (string, bool), cwd, home string) (string, error) {
	name, explicit := flag, flag != ""
	if !explicit && lookupEnv != nil {
		if v, ok := lookupEnv(SaltfileEnv); ok {
			if v == "" {
				return "", nil
			}
			name, explicit = v, true
		}
	}
	if explicit {
		if !isFile(name) {
			return "", fmt.Errorf("find saltfile %q: %w", name, ErrSaltfileNotFound)
		}
		return filepath.Abs(name)
	}
	for _, c := range []string{cwd, filepath.Join(home, ".salt")} {
		if c == "" {
			continue
		}
		if p := filepath.Join(c, "Saltfile"); isFile(p) {
			return filepath.Abs(p)
		}
	}
	return "", nil
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// LoadSaltfile reads path and returns the section of prog (e.g.
// "salt-ssh"). An empty file, or one without a section for prog, gives
// an empty Options, as in Salt.
func LoadSaltfile(path, prog string) (*Saltfile, error) {
	src, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read saltfile %q: %w", path, ErrSaltfileNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read saltfile: %w", err)
	}
	return ParseSaltfile(src, path, prog)
}

// ParseSaltfile parses Saltfile text; see LoadSaltfile.
func ParseSaltfile(src []byte, path, prog string) (*Saltfile, error) {
	sf := &Saltfile{Path: path, Options: ordered.New()}
	v, err := saltyaml.Load(src, path)
	if err != nil {
		return nil, fmt.Errorf("load saltfile: %w", err)
	}
	if v == nil {
		return sf, nil
	}
	top, ok := v.(*ordered.Map)
	if !ok {
		return nil, fmt.Errorf("load saltfile %s: the file must hold a mapping of program names, not %s", path, typeName(v))
	}
	sec, ok := top.Get(prog)
	if !ok || sec == nil {
		return sf, nil
	}
	m, ok := sec.(*ordered.Map)
	if !ok {
		return nil, fmt.Errorf("load saltfile %s: section %s must be a mapping of options, not %s", path, prog, typeName(sec))
	}
	m.Range(func(k, v any) bool { sf.Options.Set(ordered.KeyString(k), v); return true })
	return sf, nil
}
