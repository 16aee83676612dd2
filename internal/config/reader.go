package config

import (
	"fmt"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
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

// set converts v to kind and stores it through dst, the pointer an
// option table's Field returns.
func (r *reader) set(key string, kind Kind, unit time.Duration, dst any, v any) {
	var err error
	switch kind {
	case KindString:
		*dst.(*string) = ordered.KeyString(v)
	case KindInt:
		var n int
		if n, err = toInt(v); err == nil {
			*dst.(*int) = n
		}
	case KindBool:
		b, isBool := v.(bool)
		if !isBool {
			err = fmt.Errorf("want True or False, got %v", ordered.KeyString(v))
			break
		}
		*dst.(*bool) = b
	case KindDuration:
		var f float64
		if f, err = toFloat(v); err == nil {
			*dst.(*time.Duration) = time.Duration(f * float64(unit))
		}
	case KindMapping:
		m, isMap := v.(*ordered.Map)
		if !isMap {
			err = fmt.Errorf("want a mapping, got %s", typeName(v))
			break
		}
		*dst.(**ordered.Map) = m
	case KindRoots:
		var roots map[string][]string
		if roots, err = toRoots(v); err == nil {
			*dst.(*map[string][]string) = roots
		}
	case KindStrings:
		*dst.(*[]string) = toStrings(v)
	default:
		panic(fmt.Sprintf("config: option %s: kind %d has no field type", key, kind))
	}
	if err != nil {
		r.fail(key, err)
	}
}

// toStrings reads a string or a list of scalars as a list of strings.
func toStrings(v any) []string {
	list, ok := v.([]any)
	if !ok {
		return []string{ordered.KeyString(v)}
	}
	out := make([]string, 0, len(list))
	for _, x := range list {
		out = append(out, ordered.KeyString(x))
	}
	return out
}
