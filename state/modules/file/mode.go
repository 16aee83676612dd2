package file

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
)

// NormalizeMode is salt.utils.files.normalize_mode: the mode as a string
// with "0o" turned into "0", quotes and leading zeros stripped, then
// zero-padded to four digits, so that YAML's int 644 and the strings
// "644", "0644" and "0o644" all become "0644". ok is false for None.
func NormalizeMode(v any) (mode string, ok bool) {
	if v == nil {
		return "", false
	}
	s, isStr := v.(string)
	if !isStr {
		s = ordered.KeyString(v)
	}
	s = strings.ReplaceAll(s, "0o", "0")
	s = strings.TrimLeft(strings.Trim(strings.Trim(s, `"`), "'"), "0")
	for len(s) < 4 {
		s = "0" + s
	}
	return s, true
}

// ParseMode converts a mode string as set_mode does (leading "0", "o"
// and "O" stripped, then read as octal) into permission bits.
func ParseMode(mode string) (os.FileMode, error) {
	m := strings.TrimLeft(mode, "0Oo")
	if m == "" {
		m = "0"
	}
	n, err := strconv.ParseUint(m, 8, 32)
	if err != nil || n > 0o7777 {
		//lint:ignore ST1005 Salt's exact message
		return 0, fmt.Errorf("Invalid Mode %s", m)
	}
	return permBits(uint32(n)), nil
}

// PermBits maps Unix mode bits (stat.S_IMODE, what Python's os.chmod
// takes) onto os.FileMode, whose setuid, setgid and sticky flags live
// outside the low bits: os.Chmod(p, 0o4755) sets 0755 and drops the
// setuid bit without an error.
func PermBits(n uint32) os.FileMode { return permBits(n) }

func permBits(n uint32) os.FileMode {
	m := os.FileMode(n & 0o777)
	if n&0o4000 != 0 {
		m |= os.ModeSetuid
	}
	if n&0o2000 != 0 {
		m |= os.ModeSetgid
	}
	if n&0o1000 != 0 {
		m |= os.ModeSticky
	}
	return m
}

// unixBits is the inverse of permBits: stat.S_IMODE of a FileMode.
func unixBits(m os.FileMode) uint32 {
	n := uint32(m.Perm())
	if m&os.ModeSetuid != 0 {
		n |= 0o4000
	}
	if m&os.ModeSetgid != 0 {
		n |= 0o2000
	}
	if m&os.ModeSticky != 0 {
		n |= 0o1000
	}
	return n
}

// octalMode renders mode bits as Salt's stats does:
// normalize_mode(oct(S_IMODE(st_mode))).
func octalMode(n uint32) string {
	s, _ := NormalizeMode("0o" + strconv.FormatUint(uint64(n), 8))
	return s
}
