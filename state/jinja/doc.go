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
// shared as in Python, plus tuples, dict views, namespaces, macros, loop
// objects and undefined values. Vars are deep-copied in once per Render
// (the template sees one shared copy, as globals and as the context, but
// never mutates the caller's data); values handed to the Salt caller are
// converted back to the model ([]any, *ordered.Map).
//
// # Conformance
//
// testdata/cases.json holds the expected output (or Salt-formatted error
// and line) of each template as rendered by real Jinja2 in an environment
// configured like Salt's; testdata/gen_cases.py regenerates it. Besides
// hand-written cases it holds seeded random templates: statement nests
// with whitespace control, expressions, string formatting and filter
// chains.
//
// # Errors
//
// Every failure is an *Error whose Msg carries Salt's prefix and whose
// Error() is SaltRenderError's text: "Jinja variable 'x' is undefined;
// line 3" followed by the excerpt. A failure inside an imported or
// included template names that template and line in Msg and leaves Line
// at 0, as Salt does. Error unwraps to the cause (a SaltCaller error,
// ErrTemplateNotFound, a context error).
//
// # Known differences from Salt
//
//   - Integers are 64-bit, not Python's unbounded ints.
//   - Filters that are lazy in Jinja (map, select, reject, selectattr,
//     rejectattr, batch, reverse, items) return lists: printing one
//     directly shows the items instead of "<generator object ...>".
//   - Jinja's optimizer evaluates constant subexpressions at compile
//     time; when such an expression fails, Jinja reports that error even
//     if another part of the template would fail first at run time.
//   - Markup is not modelled: |e on already escaped text escapes again.
//   - Strings are UTF-8; Python's bytes are not modelled: json_encode_dict
//     and friends (which yield bytes in Salt on Python 3) return their
//     input.
//   - Regular expressions use Go's RE2: no backreferences or lookaround
//     in regex_search, regex_match, regex_replace and the match test.
//   - The sandbox's attribute rules are reduced to "names starting with an
//     underscore are undefined"; Python attributes beyond the common
//     methods of dict, list, str and loop objects do not exist.
//   - YAML errors from load_yaml and import_yaml give the problem and an
//     excerpt, as Salt does with PyYAML's pure-Python loader; with libyaml
//     Salt itself fails there with "'NoneType' object has no attribute
//     'splitlines'".
//   - strftime parses a few common date layouts itself instead of
//     timelib.
//   - Filters absent here: xml, dict_to_sls_yaml_params, the network and
//     file filters (ipaddr, is_ip, file_hashsum, ...), http_query,
//     random_*, json_query, combinations and the other itertools.
package jinja
