package config

import (
	"fmt"
	"time"

	"github.com/brinesalt/brine/state/ordered"
)

// reader reads typed options out of a raw config, collecting every
// problem instead of stopping at the first; absent and null options
// leave the destination at its default.
type reader struct {
	raw  *ordered.Map
	errs []string
}

func (r *reader) get(key string) (any, bool) {
	v, ok := r.raw.Get(key)
	return v, ok && v != nil
}

func (r *reader) fail(key string, err error) {
	r.errs = append(r.errs, fmt.Sprintf("%s: %v", key, err))
}

func (r *reader) str(key string, dst *string) {
	if v, ok := r.get(key); ok {
		*dst = ordered.KeyString(v)
	}
}

func (r *reader) num(key string, dst *int) {
	if v, ok := r.get(key); ok {
		n, err := toInt(v)
		if err != nil {
			r.fail(key, err)
			return
		}
		*dst = n
	}
}

func (r *reader) boolean(key string, dst *bool) {
	if v, ok := r.get(key); ok {
		b, isBool := v.(bool)
		if !isBool {
			r.fail(key, fmt.Errorf("want True or False, got %v", ordered.KeyString(v)))
			return
		}
		*dst = b
	}
}

// duration reads a number of units (seconds, minutes) as a Duration.
func (r *reader) duration(key string, unit time.Duration, dst *time.Duration) {
	if v, ok := r.get(key); ok {
		f, err := toFloat(v)
		if err != nil {
			r.fail(key, err)
			return
		}
		*dst = time.Duration(f * float64(unit))
	}
}

func (r *reader) mapping(key string, dst **ordered.Map) {
	if v, ok := r.get(key); ok {
		m, isMap := v.(*ordered.Map)
		if !isMap {
			r.fail(key, fmt.Errorf("want a mapping, got %s", typeName(v)))
			return
		}
		*dst = m
	}
}
