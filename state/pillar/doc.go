// Package pillar compiles the minion's pillar from pillar_roots and
// external pillars the way salt/pillar/__init__.py Pillar.compile_pillar
// does.
//
// The top file picks SLS files, which are rendered, have their includes
// resolved and are merged in order with the pillar_source_merging_strategy
// (Strategy; by default "smart", a recursive merge that replaces lists
// unless pillar_merge_lists is on). The ext_pillar option then runs the
// external pillars it lists, in order, each merged over the result
// (before the SLS files with ext_pillar_first). The pillar= override of
// the job is merged last. Failures do not fail the compilation: Salt's
// messages are collected under `_errors`, and the detail, with the file
// and line of a render error, goes to the log.
//
// External pillars register in an ExtRegistry under Salt's names; the
// package registers cmd_yaml, cmd_json and git (a local git repository
// of pillar SLS files) in DefaultExt.
package pillar
