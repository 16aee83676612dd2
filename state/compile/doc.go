// Package compile turns rendered SLS files into Salt's high data and high
// data into ordered low chunks, as salt/state.py BaseHighState and State
// do in Salt 3006:
//
//   - HighState reads top files (GetTop, TopMatches) and renders SLS files
//     with their includes (RenderHighstate): an included SLS is rendered
//     and auto-ordered before the rest of its includer, an SLS is rendered
//     once, `extend:` and `exclude:` are collected under `__extend__` and
//     `__exclude__`, and `mod.fun:` keys become `mod: [..., fun]`.
//   - ReconcileExtend, VerifyHigh, RequisiteIn and ApplyExclude prepare the
//     high data; their error strings are Salt's compile errors, word for
//     word, since callers print them as the job's return.
//   - CompileHigh expands `names:` and orders the chunks (OrderChunks).
//
// Values follow the ordered package's model; high data keeps YAML key
// order because show_sls and show_highstate print it.
package compile
