// Package saltyaml reads and writes YAML exactly as Salt 3006 does.
//
// Salt loads every SLS file, pillar, roster and CLI argument through
// SaltYamlSafeLoader (salt/utils/yamlloader.py): PyYAML's YAML 1.1
// SafeLoader on libyaml, with three overrides that this package reproduces:
//
//   - mappings keep their key order (an OrderedDict; here *ordered.Map);
//   - integers written with a leading zero are decimal (0644 is 644, so
//     `mode: 0644` means what the user meant), and timestamps stay strings;
//   - a key repeated in one mapping is an error ("found conflicting ID"),
//     and merge keys (<<) are flattened with Salt's own rules.
//
// Values follow Brine's model (see internal/ordered): nil, bool, int, float64,
// string, []any and *ordered.Map.
//
// Parsing is done by go.yaml.in/yaml/v4, a port of libyaml, so syntax
// errors carry libyaml's (and therefore Salt's) wording and positions;
// scalar resolution and construction are done here with PyYAML's resolver
// patterns. v4 follows YAML 1.2 where libyaml 0.2.5 is stricter (tabs as
// separation, empty keys, duplicate anchors), so the source is also run
// through gopkg.in/yaml.v3, which kept libyaml's scanner, and those of its
// errors that match libyaml are reported.
//
// Known differences from Salt:
//
//   - integers beyond 64 bits become float64; !!binary gives a string of
//     the bytes and !!set an *ordered.Map of nil values; an alias inside
//     its own anchor is an error rather than a recursive object;
//   - aliased collections load as one shared value, as in Python, but a
//     document whose aliases expand past MaxExpanded values (a "billion
//     laughs") is refused with its file and line, where PyYAML loads it
//     and Salt then runs out of memory copying or sending it; Dump writes shared values out in full rather than as &id001 anchors,
//     and byte strings (invalid UTF-8) as escaped text, not !!binary;
//   - a few syntax corners libyaml rejects still load: a tag right before
//     a flow indicator ("[a, !!str]"), ":" before a flow indicator in a
//     flow scalar ("[a:, b]"); "%YAML 1.2" is rejected although libyaml
//     takes it;
//   - errors found only by the yaml.v3 pass carry a line but no column.
//
// The writer side (Dump, Encode, DumpDQuote) follows PyYAML's safe_dump as
// used by Salt's |yaml filters and yaml outputter, and ParseCLIArg /
// ParseInput follow salt/utils/args.py for command-line arguments.
package saltyaml
