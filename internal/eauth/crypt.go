package eauth

import (
	"crypto/md5"
	"crypto/sha256"
	"crypto/sha512"
	"errors"
	"hash"
	"strconv"
	"strings"
)

// The crypt(3) alphabet, least significant six bits first.
const cryptAlphabet = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// verifyCrypt checks an MD5-crypt ($1$, Apache's $apr1$) or SHA-crypt
// ($5$, $6$) hash, computed with Go's md5 and sha2 from the published
// algorithms (Poul-Henning Kamp's md5crypt, Ulrich Drepper's SHA-crypt).
func verifyCrypt(stored, password string) (bool, error) {
	var got string
	var err error
	switch {
	case strings.HasPrefix(stored, "$apr1$"):
		got = md5Crypt("$apr1$", password, stored[len("$apr1$"):])
	case strings.HasPrefix(stored, "$1$"):
		got = md5Crypt("$1$", password, stored[len("$1$"):])
	case strings.HasPrefix(stored, "$5$"):
		got, err = shaCrypt("$5$", sha256.New, sha256Order, password, stored[len("$5$"):])
	case strings.HasPrefix(stored, "$6$"):
		got, err = shaCrypt("$6$", sha512.New, sha512Order, password, stored[len("$6$"):])
	default:
		return false, errors.New("file eauth: not a crypt hash")
	}
	if err != nil {
		return false, err
	}
	return constEq(got, stored), nil
}

// cryptSalt is the salt of a crypt hash: up to max characters before the
// next '$'.
func cryptSalt(rest string, max int) string {
	if i := strings.IndexByte(rest, '$'); i >= 0 {
		rest = rest[:i]
	}
	if len(rest) > max {
		rest = rest[:max]
	}
	return rest
}

// b64From24 appends the n low six-bit groups of b2<<16|b1<<8|b0.
func b64From24(out []byte, b2, b1, b0 byte, n int) []byte {
	w := uint(b2)<<16 | uint(b1)<<8 | uint(b0)
	for ; n > 0; n-- {
		out = append(out, cryptAlphabet[w&0x3f])
		w >>= 6
	}
	return out
}

// md5Crypt is md5crypt with magic "$1$" or "$apr1$".
func md5Crypt(magic, pw, rest string) string {
	salt := cryptSalt(rest, 8)
	alt := md5.Sum([]byte(pw + salt + pw))
	ctx := []byte(pw + magic + salt)
	for i := len(pw); i > 0; i -= 16 {
		ctx = append(ctx, alt[:min(16, i)]...)
	}
	for i := len(pw); i > 0; i >>= 1 {
		if i&1 != 0 {
			ctx = append(ctx, 0)
		} else {
			ctx = append(ctx, pw[0])
		}
	}
	final := md5.Sum(ctx)
	for i := 0; i < 1000; i++ {
		var c []byte
		if i&1 != 0 {
			c = append(c, pw...)
		} else {
			c = append(c, final[:]...)
		}
		if i%3 != 0 {
			c = append(c, salt...)
		}
		if i%7 != 0 {
			c = append(c, pw...)
		}
		if i&1 != 0 {
			c = append(c, final[:]...)
		} else {
			c = append(c, pw...)
		}
		final = md5.Sum(c)
	}
	out := []byte(magic + salt + "$")
	for _, g := range [][3]int{{0, 6, 12}, {1, 7, 13}, {2, 8, 14}, {3, 9, 15}, {4, 10, 5}} {
		out = b64From24(out, final[g[0]], final[g[1]], final[g[2]], 4)
	}
	return string(b64From24(out, 0, 0, final[11], 2))
}

// sha256Order and sha512Order are SHA-crypt's byte order for the
// encoding: groups of three bytes (the last one shorter, -1 for zero).
var (
	sha256Order = [][3]int{{0, 10, 20}, {21, 1, 11}, {12, 22, 2}, {3, 13, 23}, {24, 4, 14},
		{15, 25, 5}, {6, 16, 26}, {27, 7, 17}, {18, 28, 8}, {9, 19, 29}, {-1, 31, 30}}
	sha512Order = func() [][3]int {
		var o [][3]int
		for i := 0; i < 21; i++ {
			a, b, c := i, i+21, i+42
			switch i % 3 {
			case 1:
				a, b, c = i+21, i+42, i
			case 2:
				a, b, c = i+42, i, i+21
			}
			o = append(o, [3]int{a, b, c})
		}
		return append(o, [3]int{-1, -1, 63})
	}()
)

const (
	shaCryptDefaultRounds = 5000
	shaCryptMinRounds     = 1000
	shaCryptMaxRounds     = 999999999
)

// shaCrypt is Drepper's SHA-crypt for magic "$5$" or "$6$".
func shaCrypt(magic string, newHash func() hash.Hash, order [][3]int, pw, rest string) (string, error) {
	rounds, custom := shaCryptDefaultRounds, false
	if r, ok := strings.CutPrefix(rest, "rounds="); ok {
		num, after, found := strings.Cut(r, "$")
		n, err := strconv.ParseUint(num, 10, 64)
		if !found || err != nil {
			return "", errors.New("file eauth: malformed rounds in a sha-crypt hash")
		}
		rounds, custom, rest = int(min(max(n, shaCryptMinRounds), shaCryptMaxRounds)), true, after
	}
	salt := cryptSalt(rest, 16)
	sum := func(parts ...[]byte) []byte {
		h := newHash()
		for _, p := range parts {
			h.Write(p)
		}
		return h.Sum(nil)
	}
	p, s := []byte(pw), []byte(salt)
	b := sum(p, s, p)
	size := len(b)
	ctx := append(append([]byte{}, p...), s...)
	for n := len(p); n > 0; n -= size {
		ctx = append(ctx, b[:min(size, n)]...)
	}
	for n := len(p); n > 0; n >>= 1 {
		if n&1 != 0 {
			ctx = append(ctx, b...)
		} else {
			ctx = append(ctx, p...)
		}
	}
	a := sum(ctx)
	pBytes := repeatTo(sum(repeat(p, len(p))), len(p))
	sBytes := repeatTo(sum(repeat(s, 16+int(a[0]))), len(s))
	c := a
	for i := 0; i < rounds; i++ {
		h := newHash()
		if i&1 != 0 {
			h.Write(pBytes)
		} else {
			h.Write(c)
		}
		if i%3 != 0 {
			h.Write(sBytes)
		}
		if i%7 != 0 {
			h.Write(pBytes)
		}
		if i&1 != 0 {
			h.Write(c)
		} else {
			h.Write(pBytes)
		}
		c = h.Sum(c[:0])
	}
	out := []byte(magic)
	if custom {
		out = append(out, "rounds="+strconv.Itoa(rounds)+"$"...)
	}
	out = append(out, salt+"$"...)
	at := func(i int) byte {
		if i < 0 {
			return 0
		}
		return c[i]
	}
	for k, g := range order {
		n := 4
		if k == len(order)-1 {
			n = (size*8 - 6*4*(len(order)-1) + 5) / 6
		}
		out = b64From24(out, at(g[0]), at(g[1]), at(g[2]), n)
	}
	return string(out), nil
}

func repeat(b []byte, n int) []byte {
	out := make([]byte, 0, len(b)*n)
	for i := 0; i < n; i++ {
		out = append(out, b...)
	}
	return out
}

// repeatTo is b repeated and cut to n bytes.
func repeatTo(b []byte, n int) []byte {
	out := make([]byte, 0, n)
	for len(out) < n {
		out = append(out, b[:min(len(b), n-len(out))]...)
	}
	return out
}

// SHA512Crypt is the $6$ crypt(3) hash of password with salt (up to 16
// characters of the crypt alphabet), as /etc/shadow holds passwords.
func SHA512Crypt(password, salt string) string {
	h, _ := shaCrypt("$6$", sha512.New, sha512Order, password, salt) // no rounds= prefix: cannot fail
	return h
}
