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
// Values follow Brine's model (see state/ordered): nil, bool, int, float64,
// string, []any and *ordered.Map.
//
// Parsing is done by go.yaml.in/yaml/v4, a port of libyaml, so syntax
// errors carry libyaml's (and therefore Salt's) wording; scalar resolution
// and construction are done here with PyYAML's resolver patterns.
//
// The writer side (Dump, Encode, DumpDQuote) follows PyYAML's safe_dump as
// used by Salt's |yaml filters and yaml outputter, and ParseCLIArg /
// ParseInput follow salt/utils/args.py for command-line arguments.
package saltyaml
