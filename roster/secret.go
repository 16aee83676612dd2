package roster

import (
	"encoding/json"
	"fmt"
	"log/slog"
)

// Redacted is what a non-empty Secret prints as.
const Redacted = "[redacted]"

// Secret holds a password or passphrase from a roster (passwd,
// priv_passwd). Every way of printing it — String, GoString, fmt verbs,
// slog, JSON, text marshalling — shows Redacted instead of the value, so a
// Target can be logged or dumped safely. Reveal returns the value.
type Secret string

// Reveal returns the secret value; call it only where the value is used.
func (s Secret) Reveal() string { return string(s) }

// IsSet reports whether the secret is non-empty.
func (s Secret) IsSet() bool { return s != "" }

func (s Secret) redacted() string {
	if s == "" {
		return ""
	}
	return Redacted
}

// String returns Redacted, or "" for an empty secret.
func (s Secret) String() string { return s.redacted() }

// GoString keeps %#v from printing the value.
func (s Secret) GoString() string { return fmt.Sprintf("roster.Secret(%q)", s.redacted()) }

// Format redacts the secret for every fmt verb.
func (s Secret) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		_, _ = fmt.Fprint(f, s.GoString())
		return
	}
	_, _ = fmt.Fprint(f, s.redacted())
}

// LogValue redacts the secret in log/slog output.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.redacted()) }

// MarshalJSON writes the redacted form.
func (s Secret) MarshalJSON() ([]byte, error) { return json.Marshal(s.redacted()) }

// MarshalText writes the redacted form (YAML and other text encoders).
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.redacted()), nil }
