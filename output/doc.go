// Package output renders return data as Salt's outputters do (nested,
// json, yaml, txt, raw, pprint, quiet), byte for byte where Salt's text is
// defined by Python's formatting, so that scripts parsing salt-ssh output
// keep working.
//
// Outputters register by name; the highstate outputter lives in its own
// package and registers itself the same way. Data is in Brine's value
// model: nil, bool, int, float64, string, []any and *ordered.Map.
package output
