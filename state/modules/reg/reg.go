// Package reg is Salt's reg execution module (salt/modules/reg.py over
// salt/utils/win_reg.py): reading, writing and deleting Windows registry
// values and keys. The functions register on Windows only, as Salt's
// __virtual__ loads the module only there; the hive and value-type
// tables and the vdata casts below are shared so they are tested
// everywhere.
package reg

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/state/modules"
)

// Hives maps Salt's hive names (long and short) to the predefined key
// handles' names in canonical form.
var Hives = map[string]string{
	"HKEY_CURRENT_CONFIG": "HKEY_CURRENT_CONFIG", "HKCC": "HKEY_CURRENT_CONFIG",
	"HKEY_CLASSES_ROOT": "HKEY_CLASSES_ROOT", "HKCR": "HKEY_CLASSES_ROOT",
	"HKEY_CURRENT_USER": "HKEY_CURRENT_USER", "HKCU": "HKEY_CURRENT_USER",
	"HKEY_LOCAL_MACHINE": "HKEY_LOCAL_MACHINE", "HKLM": "HKEY_LOCAL_MACHINE",
	"HKEY_USERS": "HKEY_USERS", "HKU": "HKEY_USERS",
}

// Value types by name and number (win_reg.Registry vtype).
const (
	RegNone     = 0
	RegSz       = 1
	RegExpandSz = 2
	RegBinary   = 3
	RegDword    = 4
	RegMultiSz  = 7
	RegQword    = 11
)

var vtypes = map[string]uint32{"REG_NONE": RegNone, "REG_BINARY": RegBinary, "REG_DWORD": RegDword,
	"REG_EXPAND_SZ": RegExpandSz, "REG_MULTI_SZ": RegMultiSz, "REG_SZ": RegSz, "REG_QWORD": RegQword}

// VtypeName is vtype_reverse: the name of a value type number.
func VtypeName(t uint32) string {
	for k, v := range vtypes {
		if v == t {
			return k
		}
	}
	return fmt.Sprintf("REG_%d", t)
}

// Vtype is the number of a value type name; an unknown name is Salt's
// KeyError.
func Vtype(name string) (uint32, error) {
	t, ok := vtypes[name]
	if !ok {
		return 0, modules.Errorf("KeyError: '%s'", name)
	}
	return t, nil
}

// CheckHive is the hive lookup every function starts with.
func CheckHive(hive string) (string, error) {
	h, ok := Hives[hive]
	if !ok {
		return "", modules.Errorf("Invalid Hive: %s", hive)
	}
	return h, nil
}

// ParseKey is salt/states/reg.py _parse_key: "HKLM\SOFTWARE\Salt" →
// hive "HKLM", key "SOFTWARE\Salt".
func ParseKey(name string) (hive, key string) {
	hive, key, _ = strings.Cut(name, `\`)
	return hive, key
}

// CastVdata is win_reg.cast_vdata: vdata as the Go value the registry
// stores for vtype — a string for REG_SZ and REG_EXPAND_SZ, bytes for
// REG_BINARY, a list of strings for REG_MULTI_SZ, an integer otherwise.
func CastVdata(vdata any, vtype string) (any, error) {
	t, err := Vtype(vtype)
	if err != nil {
		return nil, err
	}
	switch t {
	case RegSz, RegExpandSz:
		if vdata == nil {
			return nil, nil
		}
		return py.Str(vdata), nil
	case RegBinary:
		if vdata == nil {
			return nil, nil
		}
		return py.Str(vdata), nil
	case RegMultiSz:
		l, ok := vdata.([]any)
		if !ok {
			if s, isStr := vdata.(string); isStr {
				// Python iterates a string's characters.
				for _, r := range s {
					l = append(l, string(r))
				}
			} else {
				return nil, modules.Errorf("TypeError: '%s' object is not iterable", py.TypeName(vdata))
			}
		}
		out := make([]any, len(l))
		for i, x := range l {
			out[i] = py.Str(x)
		}
		return out, nil
	}
	return pyInt(vdata)
}

// pyInt is Python's int() of vdata.
func pyInt(v any) (any, error) {
	switch x := v.(type) {
	case int:
		return x, nil
	case bool:
		if x {
			return 1, nil
		}
		return 0, nil
	case float64:
		return int(x), nil
	case string:
		n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		if err != nil {
			return nil, modules.Errorf("ValueError: invalid literal for int() with base 10: '%s'", x)
		}
		return int(n), nil
	case nil:
		return nil, modules.Errorf("TypeError: int() argument must be a string, a bytes-like object or a real number, not 'NoneType'")
	}
	return nil, modules.Errorf("TypeError: int() argument must be a string, a bytes-like object or a real number, not '%s'", py.TypeName(v))
}

// Equal compares registry data as Python's == does on the cast values.
func Equal(a, b any) bool {
	la, oka := a.([]any)
	lb, okb := b.([]any)
	if oka || okb {
		if !oka || !okb || len(la) != len(lb) {
			return false
		}
		for i := range la {
			if !Equal(la[i], lb[i]) {
				return false
			}
		}
		return true
	}
	return a == b
}
