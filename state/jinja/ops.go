package jinja

import (
	"math"
	"math/big"
	"strconv"
	"strings"
)

func itoa(i int) string { return strconv.Itoa(i) }

func (r *runner) neg(x any) (any, error) {
	switch v := x.(type) {
	case int:
		return -v, nil
	case bool:
		if v {
			return -1, nil
		}
		return 0, nil
	case float64:
		return -v, nil
	case *undefined:
		return nil, v.err()
	}
	return nil, typeErr("bad operand type for unary -: '%s'", typeName(x))
}

// arith implements Python's binary arithmetic operators.
func (r *runner) arith(op string, a, b any) (any, error) {
	if u, ok := a.(*undefined); ok {
		return nil, u.err()
	}
	if u, ok := b.(*undefined); ok {
		return nil, u.err()
	}
	if op == "%" {
		if s, ok := a.(string); ok {
			return percentFormat(r, s, b)
		}
	}
	ia, aInt := asInt(a)
	ib, bInt := asInt(b)
	if aInt && bInt {
		return intArith(op, ia, ib)
	}
	fa, aNum := numeric(a)
	fb, bNum := numeric(b)
	if aNum && bNum {
		return floatArith(op, fa, fb)
	}
	switch op {
	case "+":
		switch x := a.(type) {
		case string:
			if y, ok := b.(string); ok {
				return x + y, nil
			}
			return nil, typeErr("can only concatenate str (not \"%s\") to str", typeName(b))
		case *pyList:
			if y, ok := b.(*pyList); ok {
				out := make([]any, 0, len(x.items)+len(y.items))
				return newList(append(append(out, x.items...), y.items...)), nil
			}
			return nil, typeErr("can only concatenate list (not \"%s\") to list", typeName(b))
		case tuple:
			if y, ok := b.(tuple); ok {
				out := make(tuple, 0, len(x)+len(y))
				return append(append(out, x...), y...), nil
			}
			return nil, typeErr("can only concatenate tuple (not \"%s\") to tuple", typeName(b))
		}
	case "*":
		seq, times := a, ib
		if aInt {
			seq, times, bInt = b, ia, true
		}
		if bInt {
			if n := seqLen(seq); n > 0 && times > 0 && n*times/times != n || n*times > maxRepeat {
				return nil, runtimeErr("MemoryError")
			}
			ib := times
			switch x := seq.(type) {
			case string:
				return strings.Repeat(x, max(ib, 0)), nil
			case *pyList, tuple:
				items, _ := seqItems(x)
				out := make([]any, 0, len(items)*max(ib, 0))
				for i := 0; i < ib; i++ {
					out = append(out, items...)
				}
				if _, ok := x.(tuple); ok {
					return tuple(out), nil
				}
				return newList(out), nil
			}
		}
	}
	if op == "*" {
		pair := [2]any{a, b}
		for i, x := range pair {
			switch x.(type) {
			case string, *pyList, tuple:
				return nil, typeErr("can't multiply sequence by non-int of type '%s'", typeName(pair[1-i]))
			}
		}
	}
	return nil, typeErr("unsupported operand type(s) for %s: '%s' and '%s'", pyOpName(op), typeName(a), typeName(b))
}

// maxRepeat bounds "s * n" and "list * n" so that a template cannot
// exhaust memory; Python would fail with MemoryError much later.
const maxRepeat = 1 << 26

func seqLen(v any) int {
	if s, ok := v.(string); ok {
		return len(s)
	}
	items, _ := seqItems(v)
	return len(items)
}

func pyOpName(op string) string {
	if op == "**" {
		return "** or pow()"
	}
	return op
}

func intArith(op string, a, b int) (any, error) {
	switch op {
	case "+":
		return a + b, nil
	case "-":
		return a - b, nil
	case "*":
		return a * b, nil
	case "/":
		if b == 0 {
			return nil, runtimeErr("division by zero")
		}
		return float64(a) / float64(b), nil
	case "//":
		if b == 0 {
			return nil, runtimeErr("integer division or modulo by zero")
		}
		q := a / b
		if (a%b != 0) && ((a < 0) != (b < 0)) {
			q--
		}
		return q, nil
	case "%":
		if b == 0 {
			return nil, runtimeErr("integer division or modulo by zero")
		}
		m := a % b
		if m != 0 && ((m < 0) != (b < 0)) {
			m += b
		}
		return m, nil
	case "**":
		if b < 0 {
			if a == 0 {
				return nil, runtimeErr("0.0 cannot be raised to a negative power")
			}
			return pyPow(float64(a), float64(b)), nil
		}
		res := 1
		for i := 0; i < b && i < 4096; i++ {
			res *= a
		}
		return res, nil
	}
	return nil, runtimeErr("unknown operator %s", op)
}

func floatArith(op string, a, b float64) (any, error) {
	switch op {
	case "+":
		return a + b, nil
	case "-":
		return a - b, nil
	case "*":
		return a * b, nil
	case "/":
		if b == 0 {
			return nil, runtimeErr("float division by zero")
		}
		return a / b, nil
	case "//":
		if b == 0 {
			return nil, runtimeErr("float floor division by zero")
		}
		return math.Floor(a / b), nil
	case "%":
		if b == 0 {
			return nil, runtimeErr("float modulo")
		}
		m := math.Mod(a, b)
		if m != 0 && ((m < 0) != (b < 0)) {
			m += b
		}
		return m, nil
	case "**":
		if a == 0 && b < 0 {
			return nil, runtimeErr("0.0 cannot be raised to a negative power")
		}
		if a < 0 && b != math.Trunc(b) {
			return nil, runtimeErr("complex results are not supported")
		}
		return pyPow(a, b), nil
	}
	return nil, runtimeErr("unknown operator %s", op)
}

// pyPow is float ** float with the correctly rounded results C's pow
// (and so Python) gives for integral and half-integral exponents, where
// Go's math.Pow can be an ulp off.
func pyPow(a, b float64) float64 {
	if math.IsInf(a, 0) || math.IsNaN(a) || math.IsInf(b, 0) || math.IsNaN(b) || a == 0 ||
		math.Abs(b) > 1024 || b*2 != math.Trunc(b*2) {
		return math.Pow(a, b)
	}
	const prec = 256
	x := new(big.Float).SetPrec(prec).SetFloat64(a)
	n := int(math.Abs(math.Trunc(b)))
	res := new(big.Float).SetPrec(prec).SetInt64(1)
	base := new(big.Float).SetPrec(prec).Set(x)
	for ; n > 0; n >>= 1 {
		if n&1 == 1 {
			res.Mul(res, base)
		}
		base.Mul(base, base)
	}
	if b != math.Trunc(b) {
		if a < 0 {
			return math.NaN()
		}
		res.Mul(res, new(big.Float).SetPrec(prec).Sqrt(x))
	}
	if b < 0 {
		res.Quo(new(big.Float).SetPrec(prec).SetInt64(1), res)
	}
	f, _ := res.Float64()
	return f
}
