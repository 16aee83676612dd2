// Package jinja renders Salt's Jinja templates: SLS files, map.jinja and
// macro libraries, file.managed templates.
//
// It reproduces the Jinja2 environment Salt builds in
// salt/utils/templates.py (render_jinja_tmpl): StrictUndefined unless
// allow_undefined, trim_blocks and lstrip_blocks off, the do, loopcontrols
// and with extensions, Salt's SerializerExtension tags (import_yaml,
// import_json, import_text, load_yaml, load_json, load_text, profile),
// Salt's filters and tests (salt/utils/jinja.py and the @jinja_filter
// functions elsewhere), the finalizer that prints dicts as {'a': 1}, and
// SaltRenderError's message format with its source excerpt.
//
// # Why an own engine
//
// github.com/nikolalohinski/gonja/v2 was evaluated first. It is the most
// Jinja2-like Go engine, but the gaps that matter for Salt trees are in
// its core rather than at its extension points: values are Go
// reflection values, so insertion-ordered dicts, in-place list.append
// and dict.update in {% do %}, Python's repr of None/True/dicts and
// '%' formatting all need wrappers threaded through every filter and
// operator; its undefined handling and error texts differ from
// StrictUndefined's ("'dict object' has no attribute 'x'"), and errors do
// not carry what Salt's excerpt needs. Owning a small
// lexer/parser/evaluator (a few thousand lines, following
// jinja2/lexer.py and jinja2/parser.py's grammar) made Python semantics
// the native value model instead of a layer on top, and keeps the module
// free of a large dependency.
//
// # Values
//
// Inside the engine values are Brine's model (nil, bool, int, float64,
// string, *ordered.Map) with lists held as *pyList so that appends are
// shared as in Python, plus tuples, namespaces, macros, loop objects and
// undefined values. Vars are deep-copied in; values handed to the Salt
// caller are converted back to the model ([]any, *ordered.Map).
//
// # Known differences from Salt
//
//   - Strings are UTF-8; Python's bytes (json_encode_dict in Python 3
//     yields bytes) are not modelled: those filters return their input.
//   - Regular expressions use Go's RE2: no backreferences or lookaround.
//   - The sandbox's attribute rules are reduced to "names starting with
//     an underscore are undefined".
package jinja
