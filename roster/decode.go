package roster

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
)

// field is one roster key with its decoded value, the scalar's source
// text (for cmd_umask) and its line (0 for roster_defaults).
type field struct {
	key  string
	val  any
	raw  string
	line int
}

// defaultFields turns roster_defaults into fields and checks them once,
// so that a bad default is reported once rather than for every entry.
// Salt deep-copies the dict and updates it with the entry
// (roster_matcher.py get_data).
func defaultFields(m *ordered.Map, o Options) ([]field, []error) {
	var out []field
	m.Range(func(k, v any) bool {
		out = append(out, field{key: ordered.KeyString(k), val: v})
		return true
	})
	_, errs := buildTarget("", out, o)
	return out, errs
}

// mergeFields is dict.update: own keys replace defaults in place, new keys
// go to the end. Nested mappings are replaced whole, not merged.
func mergeFields(defaults, own []field) []field {
	out := append([]field(nil), defaults...)
	idx := map[string]int{}
	for i, f := range out {
		idx[f.key] = i
	}
	for _, f := range own {
		if i, ok := idx[f.key]; ok {
			out[i] = f
			continue
		}
		idx[f.key] = len(out)
		out = append(out, f)
	}
	return out
}

// setter decodes one known key into a Target.
type setter func(t *Target, f field) error

// setters lists every roster key Salt reads, with its type.
var setters = map[string]setter{
	"host":                 strField(func(t *Target) *string { return &t.Host }),
	"port":                 setPort,
	"user":                 strField(func(t *Target) *string { return &t.User }),
	"passwd":               secretField(func(t *Target) *Secret { return &t.Passwd }),
	"priv":                 strField(func(t *Target) *string { return &t.Priv }),
	"priv_passwd":          secretField(func(t *Target) *Secret { return &t.PrivPasswd }),
	"sudo":                 boolField(func(t *Target) *bool { return &t.Sudo }),
	"sudo_user":            strField(func(t *Target) *string { return &t.SudoUser }),
	"tty":                  boolField(func(t *Target) *bool { return &t.TTY }),
	"timeout":              setTimeout,
	"keepalive":            boolField(func(t *Target) *bool { return &t.Keepalive }),
	"keepalive_interval":   intField(func(t *Target) *int { return &t.KeepaliveInterval }),
	"keepalive_count_max":  intField(func(t *Target) *int { return &t.KeepaliveCountMax }),
	"thin_dir":             strField(func(t *Target) *string { return &t.ThinDir }),
	"cmd_umask":            setUmask,
	"minion_opts":          mapField(func(t *Target) **ordered.Map { return &t.MinionOpts }),
	"grains":               mapField(func(t *Target) **ordered.Map { return &t.Grains }),
	"mine_functions":       mapField(func(t *Target) **ordered.Map { return &t.MineFunctions }),
	"ssh_options":          setSSHOptions,
	"identities_only":      boolField(func(t *Target) *bool { return &t.IdentitiesOnly }),
	"remote_port_forwards": strField(func(t *Target) *string { return &t.RemotePortForwards }),
	"set_path":             strField(func(t *Target) *string { return &t.SetPath }),
	"ssh_pre_flight":       strField(func(t *Target) *string { return &t.SSHPreFlight }),
	"ssh_pre_flight_args":  setPreFlightArgs,
	"ssh_pre_hook":         strField(func(t *Target) *string { return &t.SSHPreHook }),
	"disable_wipe":         boolField(func(t *Target) *bool { return &t.DisableWipe }),
	"winrm":                boolField(func(t *Target) *bool { return &t.WinRM }),
	"ssh_python_env":       strField(func(t *Target) *string { return &t.SSHPythonEnv }),
	"relenv":               boolField(func(t *Target) *bool { return &t.Relenv }),
	// Brine's own, for salt-ssh --relay (docs/RELAY.md).
	"relay_host": strField(func(t *Target) *string { return &t.RelayHost }),
	"relay_port": intField(func(t *Target) *int { return &t.RelayPort }),
}

// KnownKeys returns the roster keys Brine understands.
func KnownKeys() []string {
	out := make([]string, 0, len(setters))
	for k := range setters {
		out = append(out, k)
	}
	return out
}

// buildTarget applies Options first, then the fields; a null value leaves
// the default in place. Every bad value is reported.
func buildTarget(id string, fields []field, o Options) (Target, []error) {
	t := Target{
		ID: id, Port: o.Port, User: o.User, Passwd: o.Passwd, Priv: o.Priv,
		PrivPasswd: o.PrivPasswd, Timeout: o.Timeout, Keepalive: o.Keepalive,
		KeepaliveInterval: o.KeepaliveInterval, KeepaliveCountMax: o.KeepaliveCountMax,
		Sudo: o.Sudo, SudoUser: o.SudoUser, IdentitiesOnly: o.IdentitiesOnly,
		RemotePortForwards: o.RemotePortForwards, ThinDir: o.ThinDir,
		SSHOptions: append([]string(nil), o.SSHOptions...),
	}
	var errs []error
	for _, f := range fields {
		set, ok := setters[f.key]
		if !ok {
			if t.Extra == nil {
				t.Extra = ordered.New()
			}
			t.Extra.Set(f.key, f.val)
			continue
		}
		if f.val == nil {
			continue
		}
		if err := set(&t, f); err != nil {
			errs = append(errs, &Error{Line: f.line, Target: id, Msg: f.key + ": " + err.Error()})
		}
	}
	if t.Host == "" {
		t.Host = id // handle_ssh: host defaults to the ID
	}
	return t, errs
}

func typeName(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean (" + ordered.KeyString(x) + ")"
	case int:
		return "an integer (" + strconv.Itoa(x) + ")"
	case float64:
		return "a number (" + py.FormatFloat(x) + ")"
	case string:
		return "a string (" + strconv.Quote(x) + ")"
	case []any:
		return "a list"
	case *ordered.Map:
		return "a mapping"
	}
	return fmt.Sprintf("%T", v)
}

func wantErr(want string, got any) error {
	return fmt.Errorf("expected %s, got %s", want, typeName(got))
}

func strField(p func(*Target) *string) setter {
	return func(t *Target, f field) error {
		s, ok := f.val.(string)
		if !ok {
			return wantErr("a string", f.val)
		}
		*p(t) = s
		return nil
	}
}

// secretField accepts any scalar, as Salt formats passwords with str():
// `passwd: 1234` is the password "1234".
func secretField(p func(*Target) *Secret) setter {
	return func(t *Target, f field) error {
		switch f.val.(type) {
		case string, int, float64, bool:
			*p(t) = Secret(ordered.KeyString(f.val))
			return nil
		}
		return fmt.Errorf("expected a string, got %s", typeName(f.val))
	}
}

func boolField(p func(*Target) *bool) setter {
	return func(t *Target, f field) error {
		b, ok := f.val.(bool)
		if !ok {
			return wantErr("a boolean (true/false)", f.val)
		}
		*p(t) = b
		return nil
	}
}

func intField(p func(*Target) *int) setter {
	return func(t *Target, f field) error {
		n, ok := f.val.(int)
		if !ok {
			return wantErr("an integer", f.val)
		}
		*p(t) = n
		return nil
	}
}

func mapField(p func(*Target) **ordered.Map) setter {
	return func(t *Target, f field) error {
		m, ok := f.val.(*ordered.Map)
		if !ok {
			return wantErr("a mapping", f.val)
		}
		*p(t) = m
		return nil
	}
}

// setPort accepts an int or a string of digits (ssh_port is the string
// "22" in Salt) in 1..65535.
func setPort(t *Target, f field) error {
	var n int
	switch x := f.val.(type) {
	case int:
		n = x
	case string:
		v, err := strconv.Atoi(strings.TrimSpace(x))
		if err != nil {
			return wantErr("a port number", f.val)
		}
		n = v
	default:
		return wantErr("a port number", f.val)
	}
	if n < 1 || n > 65535 {
		return fmt.Errorf("port %d out of range 1-65535", n)
	}
	t.Port = n
	return nil
}

// setTimeout reads seconds, int or float.
func setTimeout(t *Target, f field) error {
	var s float64
	switch x := f.val.(type) {
	case int:
		s = float64(x)
	case float64:
		s = x
	default:
		return wantErr("a number of seconds", f.val)
	}
	if s <= 0 || math.IsNaN(s) || math.IsInf(s, 0) || s > 1e9 {
		return fmt.Errorf("timeout %s out of range", py.FormatFloat(s))
	}
	t.Timeout = time.Duration(s * float64(time.Second))
	return nil
}

func setSSHOptions(t *Target, f field) error {
	list, ok := f.val.([]any)
	if !ok {
		return wantErr("a list of \"Option=value\" strings", f.val)
	}
	opts := make([]string, 0, len(list))
	for _, v := range list {
		s, ok := v.(string)
		if !ok {
			return wantErr("a list of \"Option=value\" strings", v)
		}
		opts = append(opts, s)
	}
	t.SSHOptions = opts
	return nil
}

// setPreFlightArgs takes a list (each item str()'d) or a string split as
// shlex.split does (Single.execute_script).
func setPreFlightArgs(t *Target, f field) error {
	switch x := f.val.(type) {
	case []any:
		args := make([]string, 0, len(x))
		for _, v := range x {
			switch v.(type) {
			case []any, *ordered.Map:
				return wantErr("a list of strings", v)
			}
			args = append(args, ordered.KeyString(v))
		}
		t.SSHPreFlightArgs = args
	case string, int, float64, bool:
		args, err := py.Split(ordered.KeyString(x))
		if err != nil {
			return err
		}
		t.SSHPreFlightArgs = args
	default:
		return wantErr("a list or a string", f.val)
	}
	return nil
}

// setUmask reads cmd_umask as the roster documentation means it: "0077 in
// YAML, or 63". Salt itself loses the octal: its YAML loader strips the
// leading zeros (salt/utils/yamlloader.py), so 0077 becomes 77 and the
// shim calls os.umask(77), which is 0o115. Brine reads the scalar's source
// text instead, so a leading zero means octal; a plain integer is taken
// as is (63 is 0o077), and the strings "0o077" and "0077" are octal too.
func setUmask(t *Target, f field) error {
	var n int64
	var err error
	switch x := f.val.(type) {
	case int:
		n = int64(x)
		if isOctalText(f.raw) {
			n, err = strconv.ParseInt(strings.TrimLeft(f.raw, "0_"), 8, 64)
			if strings.Trim(f.raw, "0") == "" {
				n, err = 0, nil
			}
		}
	case string:
		s := strings.TrimPrefix(strings.TrimPrefix(x, "0o"), "0O")
		n, err = strconv.ParseInt(s, 8, 64)
		if err != nil {
			return wantErr("an octal umask such as 0077", f.val)
		}
	default:
		return wantErr("an octal umask such as 0077", f.val)
	}
	if err != nil || n < 0 || n > 0o777 {
		return fmt.Errorf("umask %s out of range 0-0777", ordered.KeyString(f.val))
	}
	u := int(n)
	t.CmdUmask = &u
	return nil
}

func isOctalText(s string) bool {
	if len(s) < 2 || s[0] != '0' {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '7') && c != '_' {
			return false
		}
	}
	return true
}
