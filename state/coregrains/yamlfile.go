package coregrains

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/brinesalt/brine/internal/ordered"
)

// YAMLCodec reads and writes the YAML of grains files and custom grain
// output. Package grainsyaml provides it; a binary that does not import
// that package (the thin's core flavor) has none.
type YAMLCodec struct {
	Decode func([]byte) (any, error)
	Encode func(*ordered.Map) ([]byte, error)
}

var yamlCodec *YAMLCodec

// RegisterYAML installs the YAML codec; it panics when one is already
// installed.
func RegisterYAML(c YAMLCodec) {
	if yamlCodec != nil {
		panic("grains: YAML codec registered twice")
	}
	yamlCodec = &c
}

// HasYAML reports whether this binary can read and write grains files.
func HasYAML() bool { return yamlCodec != nil }

// ErrNoYAML is the error of reading or writing YAML grains in a binary
// without the codec.
var ErrNoYAML = errors.New("this binary has no YAML codec for grains (the full thin has)")

// LoadFile reads a static grains file (YAML mapping). A missing file is
// an error wrapping os.ErrNotExist; an empty file or one that is not a
// mapping gives an empty map, as salt/grains/extra.py treats it.
func LoadFile(path string) (*ordered.Map, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	v, err := DecodeYAML(b)
	if err != nil {
		return nil, fmt.Errorf("load grains file %s: %w", path, err)
	}
	m, ok := v.(*ordered.Map)
	if !ok {
		return ordered.New(), nil
	}
	return m, nil
}

// SaveFile writes m to path as grains.setvals does, with Salt's
// safe_dump(default_flow_style=False) (block style), creating the
// directory. The write is atomic (temp file and rename).
func SaveFile(path string, m *ordered.Map) error {
	if yamlCodec == nil {
		return fmt.Errorf("save grains file %s: %w", path, ErrNoYAML)
	}
	b, err := yamlCodec.Encode(m)
	if err != nil {
		return fmt.Errorf("save grains file %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("save grains file %s: %w", path, err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("save grains file %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("save grains file %s: %w", path, err)
	}
	return nil
}

// DecodeYAML parses one YAML document into the ordered value model with
// PyYAML safe_load's YAML 1.1 scalars (yes/no/on/off booleans, 0755
// octal). An empty document is nil.
func DecodeYAML(b []byte) (any, error) {
	if yamlCodec == nil {
		return nil, ErrNoYAML
	}
	return yamlCodec.Decode(b)
}
