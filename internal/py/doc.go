// Package py holds, once, the parts of Python's behaviour that Salt's
// output and messages are made of: str() and repr() of the value model,
// type names, float formatting, json.dumps, and the shlex tokenizer.
//
// Salt prints what Python prints, so Brine must too; before this package
// each of these had been rewritten in the package that needed it, and the
// copies had drifted (one str(None) was "None", another ""). Everything
// here is checked against answers that Python 3 itself gave (see
// testdata/python.json and the script beside it that made the table).
//
// The package is a leaf: it imports nothing of the project. Values are
// Brine's value model — nil, bool, int, int64, float64, string, []any and
// insertion-ordered maps, which this package sees through the Dict
// interface so that it need not know the map type. A caller with types of
// its own (Jinja's macros, say) writes those and hands the rest here.
package py
