package jinja

import (
	"net/netip"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
)

// Less common Salt filters: IP address checks (salt/utils/network.py),
// nested-key dict helpers (salt/utils/dictupdate.py) and the itertools
// filters SerializerExtension registers.

func extraFilters() map[string]filterFunc {
	return map[string]filterFunc{
		"is_ip":                 ipTest(0),
		"is_ipv4":               ipTest(4),
		"is_ipv6":               ipTest(6),
		"ipaddr":                ipFilter(0),
		"ipv4":                  ipFilter(4),
		"ipv6":                  ipFilter(6),
		"set_dict_key_value":    dictKeyFilter("set"),
		"update_dict_key_value": dictKeyFilter("update"),
		"append_dict_key_value": dictKeyFilter("append"),
		"extend_dict_key_value": dictKeyFilter("extend"),
		"zip":                   fZip,
		"product":               fProduct,
		"date_format":           fStrftime,
	}
}

// checkIP is salt.utils.network._is_ipv: the canonical text of an address
// (or address/prefix) of the wanted version passing every option, or "".
func checkIP(v any, version int, options string) string {
	s, ok := v.(string)
	if !ok {
		return ""
	}
	var addr netip.Addr
	text := ""
	if a, err := netip.ParseAddr(s); err == nil && a.Zone() == "" {
		addr, text = a, a.String()
	} else if p, err := netip.ParsePrefix(s); err == nil {
		addr, text = p.Addr(), p.Addr().String()+"/"+itoa(p.Bits())
	} else {
		return ""
	}
	if version == 4 && !addr.Is4() || version == 6 && !addr.Is6() {
		return ""
	}
	for _, opt := range strings.Split(options, ",") {
		if !ipOption(addr, strings.TrimSpace(opt)) {
			return ""
		}
	}
	return text
}

func isPrivateIP(a netip.Addr) bool {
	return a.IsPrivate() || a.IsLoopback() || a.IsLinkLocalUnicast() || a.IsUnspecified() ||
		a.Is4() && (a.As4()[0] == 0 || a.As4()[0] >= 240)
}

func ipOption(a netip.Addr, opt string) bool {
	switch opt {
	case "":
		return true
	case "global", "public":
		return !isPrivateIP(a)
	case "link-local", "linklocal", "ll", "link_local":
		return a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast()
	case "loopback", "lo":
		return a.IsLoopback()
	case "multicast":
		return a.IsMulticast()
	case "private":
		return isPrivateIP(a)
	case "reserved":
		return a.Is4() && a.As4()[0] >= 240
	case "site-local", "sl", "site_local":
		return a.Is6() && a.As16()[0] == 0xfe && a.As16()[1]&0xc0 == 0xc0
	case "unspecified":
		return a.IsUnspecified()
	}
	return true
}

func ipOptions(r *runner, args []any, kw *ordered.Map) string {
	o, _ := arg(args, kw, 0, "options", "").(string)
	return o
}

func ipTest(version int) filterFunc {
	return func(r *runner, v any, args []any, kw *ordered.Map) (any, error) {
		opts := ipOptions(r, args, kw)
		if version == 0 {
			return checkIP(v, 4, opts) != "" || checkIP(v, 6, opts) != "", nil
		}
		return checkIP(v, version, opts) != "", nil
	}
}

// ipFilter is ipaddr/ipv4/ipv6: a string gives the address or None, a
// list keeps its valid members (IPv4 first for ipaddr).
func ipFilter(version int) filterFunc {
	one := func(v any, ver int, opts string) any {
		if s := checkIP(v, ver, opts); s != "" {
			return s
		}
		return nil
	}
	return func(r *runner, v any, args []any, kw *ordered.Map) (any, error) {
		opts := ipOptions(r, args, kw)
		versions := []int{version}
		if version == 0 {
			versions = []int{4, 6}
		}
		if _, isStr := v.(string); isStr {
			for _, ver := range versions {
				if x := one(v, ver, opts); x != nil {
					return x, nil
				}
			}
			return nil, nil
		}
		items, ok := seqItems(v)
		if !ok {
			return nil, nil
		}
		out := []any{}
		for _, ver := range versions {
			for _, it := range items {
				if x := one(it, ver, opts); x != nil {
					out = append(out, x)
				}
			}
		}
		return newList(out), nil
	}
}

// dictKeyFilter implements set/update/append/extend_dict_key_value: walk
// (creating) the "a:b:c" path, then act on the last key; the dict is
// changed in place and returned.
func dictKeyFilter(op string) filterFunc {
	return func(r *runner, v any, args []any, kw *ordered.Map) (any, error) {
		m, ok := v.(*ordered.Map)
		if !ok {
			return nil, typeErr("%s_dict_key_value requires a dict", op)
		}
		keys, _ := arg(args, kw, 0, "keys", "").(string)
		value := arg(args, kw, 1, "value", nil)
		delim, _ := arg(args, kw, 2, "delimiter", ":").(string)
		parts := strings.Split(keys, delim)
		cur := m
		for _, k := range parts[:len(parts)-1] {
			next, ok := cur.Value(k).(*ordered.Map)
			if !ok {
				next = ordered.New()
				cur.Set(k, next)
			}
			cur = next
		}
		last := parts[len(parts)-1]
		switch op {
		case "set":
			cur.Set(last, value)
		case "update":
			d, ok := cur.Value(last).(*ordered.Map)
			if !ok {
				if cur.Value(last) != nil {
					return nil, &tplError{kind: kindSalt, msg: "The last key contains a <class '" + typeName(cur.Value(last)) + "'>, which cannot update."}
				}
				d = ordered.New()
				cur.Set(last, d)
			}
			if err := r.dictUpdate(d, value); err != nil {
				return nil, err
			}
		case "append", "extend":
			l, ok := cur.Value(last).(*pyList)
			if !ok {
				if cur.Value(last) != nil {
					return nil, &tplError{kind: kindSalt, msg: "The last key contains a <class '" + typeName(cur.Value(last)) + "'>, which cannot " + op + "."}
				}
				l = newList(nil)
				cur.Set(last, l)
			}
			if op == "append" {
				l.items = append(l.items, value)
			} else {
				items, err := r.iterate(value)
				if err != nil {
					return nil, err
				}
				l.items = append(l.items, items...)
			}
		}
		return m, nil
	}
}

// fZip is Python's zip(value, *args), materialised as a list of tuples.
func fZip(r *runner, v any, args []any, _ *ordered.Map) (any, error) {
	seqs := [][]any{}
	for _, s := range append([]any{v}, args...) {
		items, err := r.iterate(s)
		if err != nil {
			return nil, err
		}
		seqs = append(seqs, items)
	}
	n := len(seqs[0])
	for _, s := range seqs {
		n = min(n, len(s))
	}
	out := make([]any, n)
	for i := range out {
		t := make(tuple, len(seqs))
		for j, s := range seqs {
			t[j] = s[i]
		}
		out[i] = t
	}
	return newList(out), nil
}

// fProduct is itertools.product(value, *args) as a list of tuples.
func fProduct(r *runner, v any, args []any, _ *ordered.Map) (any, error) {
	out := []any{tuple{}}
	for _, s := range append([]any{v}, args...) {
		items, err := r.iterate(s)
		if err != nil {
			return nil, err
		}
		var next []any
		for _, prefix := range out {
			for _, it := range items {
				t := append(append(tuple{}, prefix.(tuple)...), it)
				next = append(next, t)
			}
		}
		if len(next) > maxRepeat {
			return nil, runtimeErr("MemoryError")
		}
		out = next
	}
	return newList(out), nil
}
