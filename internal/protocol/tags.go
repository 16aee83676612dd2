package protocol

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/jid"
	"github.com/brinesalt/brine/internal/ordered"
)

// Event tag pieces (salt/utils/event.py).
const (
	TagEnd    = "\n\n"
	TagParter = "/"
	TagBase   = "salt"
)

// Tagify joins base "salt", prefix and suffix parts with "/", dropping
// empty parts, as salt.utils.event.tagify does. The known prefixes (auth,
// job, key, minion, syndic, run, wheel, cloud, fileserver, queue) map to
// themselves in Salt, so the prefix is used as given.
func Tagify(prefix string, suffix ...string) string {
	parts := append([]string{TagBase, prefix}, suffix...)
	kept := parts[:0]
	for _, p := range parts {
		if p != "" {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, TagParter)
}

// JobNewTag is salt/job/<jid>/new.
func JobNewTag(jobID string) string { return Tagify("job", jobID, "new") }

// JobReturnTag is salt/job/<jid>/ret/<id>.
func JobReturnTag(jobID, minionID string) string { return Tagify("job", jobID, "ret", minionID) }

// AuthTag is salt/auth.
func AuthTag() string { return Tagify("auth") }

// KeyTag is salt/key, fired by salt-key actions.
func KeyTag() string { return Tagify("key") }

// MinionStartTag is salt/minion/<id>/start.
func MinionStartTag(minionID string) string { return Tagify("minion", minionID, "start") }

// NewJID returns a job id for t in Salt's %Y%m%d%H%M%S%f layout, unique
// within this process (internal/jid).
func NewJID(t time.Time) string { return jid.New(t) }

// EventStamp renders t as the _stamp Salt adds to events:
// datetime.utcnow().isoformat(), which drops the fraction when it is zero.
func EventStamp(t time.Time) string {
	t = t.UTC()
	s := t.Format("2006-01-02T15:04:05")
	if us := t.Nanosecond() / 1000; us != 0 {
		s += fmt.Sprintf(".%06d", us)
	}
	return s
}

// PackEvent builds an event as SaltEvent.fire_event sends it on the IPC
// bus: tag, "\n\n", msgpack(data) with use_bin_type=True.
func PackEvent(tag string, data *ordered.Map) ([]byte, error) {
	if tag == "" {
		return nil, fmt.Errorf("pack event: empty tag")
	}
	body, err := MarshalBin(data)
	if err != nil {
		return nil, fmt.Errorf("pack event %s: %w", tag, err)
	}
	return append([]byte(tag+TagEnd), body...), nil
}

// UnpackEvent splits an event into its tag and data (SaltEvent.unpack).
func UnpackEvent(raw []byte) (string, any, error) {
	tag, body, _ := bytes.Cut(raw, []byte(TagEnd))
	data, err := Decoder{BinType: true}.Unmarshal(body)
	if err != nil {
		return "", nil, fmt.Errorf("unpack event %s: %w", tag, err)
	}
	return string(tag), data, nil
}
