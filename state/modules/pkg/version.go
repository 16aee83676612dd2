package pkg

import (
	"strings"
)

// DebianCompare orders Debian versions ([epoch:]upstream[-revision]) as
// dpkg --compare-versions does, which aptpkg.version_cmp calls: -1, 0 or
// 1.
func DebianCompare(a, b string) int {
	ea, ua, ra := debSplit(a)
	eb, ub, rb := debSplit(b)
	if c := numCmp(ea, eb); c != 0 {
		return c
	}
	if c := debPart(ua, ub); c != 0 {
		return c
	}
	return debPart(ra, rb)
}

func debSplit(v string) (epoch, upstream, rev string) {
	v = strings.TrimSpace(v)
	if i := strings.IndexByte(v, ':'); i >= 0 {
		epoch, v = v[:i], v[i+1:]
	}
	if i := strings.LastIndexByte(v, '-'); i >= 0 {
		return epoch, v[:i], v[i+1:]
	}
	return epoch, v, ""
}

// debOrder is dpkg's character order: ~ before everything, then the end
// of the string, then letters, then the rest.
func debOrder(c byte) int {
	switch {
	case c == '~':
		return -1
	case c >= '0' && c <= '9':
		return 0
	case c == 0:
		return 0
	case (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'):
		return int(c)
	}
	return int(c) + 256
}

func debPart(a, b string) int {
	for a != "" || b != "" {
		for (a != "" && !isDigit(a[0])) || (b != "" && !isDigit(b[0])) {
			var ca, cb byte
			if a != "" {
				ca = a[0]
			}
			if b != "" {
				cb = b[0]
			}
			if isDigit(ca) {
				ca = 0
			}
			if isDigit(cb) {
				cb = 0
			}
			if oa, ob := debOrder(ca), debOrder(cb); oa != ob {
				return sign(oa - ob)
			}
			if a != "" && !isDigit(a[0]) {
				a = a[1:]
			}
			if b != "" && !isDigit(b[0]) {
				b = b[1:]
			}
		}
		var na, nb string
		na, a = leadingDigits(a)
		nb, b = leadingDigits(b)
		if c := numCmp(na, nb); c != 0 {
			return c
		}
	}
	return 0
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func leadingDigits(s string) (digits, rest string) {
	i := 0
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return s[:i], s[i:]
}

// numCmp compares two digit strings by value ("" is 0).
func numCmp(a, b string) int {
	a, b = strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
	if len(a) != len(b) {
		return sign(len(a) - len(b))
	}
	return strings.Compare(a, b)
}

func sign(n int) int {
	switch {
	case n < 0:
		return -1
	case n > 0:
		return 1
	}
	return 0
}

// RPMCompare orders [epoch:]version[-release] as rpm's rpmvercmp over
// each part does (salt.utils.pkg.rpm.evr_compare).
func RPMCompare(a, b string) int {
	ea, va, ra := rpmSplit(a)
	eb, vb, rb := rpmSplit(b)
	if c := numCmp(ea, eb); c != 0 {
		return c
	}
	if c := rpmvercmp(va, vb); c != 0 {
		return c
	}
	if ra == "" || rb == "" {
		return 0
	}
	return rpmvercmp(ra, rb)
}

func rpmSplit(v string) (epoch, version, release string) {
	if i := strings.IndexByte(v, ':'); i >= 0 {
		epoch, v = v[:i], v[i+1:]
	}
	if i := strings.LastIndexByte(v, '-'); i >= 0 {
		return epoch, v[:i], v[i+1:]
	}
	return epoch, v, ""
}

func isAlnum(c byte) bool {
	return isDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func rpmvercmp(a, b string) int {
	if a == b {
		return 0
	}
	for a != "" || b != "" {
		for a != "" && !isAlnum(a[0]) && a[0] != '~' && a[0] != '^' {
			a = a[1:]
		}
		for b != "" && !isAlnum(b[0]) && b[0] != '~' && b[0] != '^' {
			b = b[1:]
		}
		if strings.HasPrefix(a, "~") || strings.HasPrefix(b, "~") {
			if !strings.HasPrefix(a, "~") {
				return 1
			}
			if !strings.HasPrefix(b, "~") {
				return -1
			}
			a, b = a[1:], b[1:]
			continue
		}
		if strings.HasPrefix(a, "^") || strings.HasPrefix(b, "^") {
			switch {
			case a == "":
				return -1
			case b == "":
				return 1
			case !strings.HasPrefix(a, "^"):
				return 1
			case !strings.HasPrefix(b, "^"):
				return -1
			}
			a, b = a[1:], b[1:]
			continue
		}
		if a == "" || b == "" {
			break
		}
		var sa, sb string
		numeric := isDigit(a[0])
		if numeric {
			sa, a = leadingDigits(a)
			sb, b = leadingDigits(b)
		} else {
			sa, a = leadingAlpha(a)
			sb, b = leadingAlpha(b)
		}
		if sb == "" {
			if numeric {
				return 1
			}
			return -1
		}
		if numeric {
			if c := numCmp(sa, sb); c != 0 {
				return c
			}
		} else if c := strings.Compare(sa, sb); c != 0 {
			return c
		}
	}
	switch {
	case a == "" && b == "":
		return 0
	case a == "":
		return -1
	}
	return 1
}

func leadingAlpha(s string) (alpha, rest string) {
	i := 0
	for i < len(s) && ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z')) {
		i++
	}
	return s[:i], s[i:]
}
