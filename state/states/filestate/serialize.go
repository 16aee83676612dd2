package filestate

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/internal/saltyaml"
	"github.com/brinesalt/brine/state/modules/file"
	"github.com/brinesalt/brine/state/states"
)

var serializeSpec = spec(true, opt("dataset", nil), opt("dataset_pillar", nil), opt("user", nil),
	opt("group", nil), opt("mode", nil), opt("backup", ""), opt("makedirs", false),
	opt("show_changes", true), opt("create", true), opt("merge_if_exists", false),
	opt("encoding", nil), opt("encoding_errors", "strict"), opt("serializer", nil),
	opt("serializer_opts", nil), opt("deserializer_opts", nil), opt("check_cmd", nil),
	opt("tmp_dir", ""), opt("tmp_ext", ""))

// serializeData is salt.serializers.<name>.serialize with file.serialize's
// default options: YAML in block style with sorted keys (PyYAML's
// represent_dict), JSON with indent 2 and sorted keys. Brine's YAML
// emitter writes non-ASCII text as it is where PyYAML (allow_unicode
// off) would escape it.
func serializeData(name string, data any) (string, error) {
	switch name {
	case "yaml":
		out, err := saltyaml.Dump(data, saltyaml.DumpOptions{SortKeys: true})
		if err != nil {
			return "", err
		}
		out = strings.TrimSuffix(out, "\n")
		return strings.TrimSuffix(out, "\n..."), nil
	case "json":
		return py.JSON(data, py.JSONOptions{Indent: 2, SortKeys: true})
	}
	return "", fmt.Errorf("no serializer %s", name)
}

func deserializeData(name string, b []byte) (any, error) {
	if name == "json" {
		return ordered.DecodeJSON(strings.NewReader(string(b)))
	}
	return saltyaml.Load(b, "")
}

// serialize is file.serialize.
func serialize(ctx context.Context, c *states.Call) (*states.Result, error) {
	name := expandUser(c.Str("name"))
	if name == "" {
		return fail(name, "Must provide name to file.serialize"), nil
	}
	r := states.NewResult(name, states.True, "")
	if !c.Bool("create") && !isFile(name) {
		r.Comment = fmt.Sprintf("File %s is not present and is not set for creation", name)
		return r, nil
	}
	formatter, _ := c.Kw("formatter")
	if c.Arg("serializer") != nil && formatter != nil {
		return fail(name, "Only one of serializer and formatter are allowed"), nil
	}
	ser := "yaml"
	if v := c.Arg("serializer"); v != nil {
		ser = strings.ToLower(py.Str(v))
	} else if formatter != nil {
		ser = strings.ToLower(py.Str(formatter))
	}
	dataset := c.Arg("dataset")
	if dataset != nil && c.Arg("dataset_pillar") != nil {
		return fail(name, "Only one of 'dataset' and 'dataset_pillar' is permitted"), nil
	}
	if p := c.Arg("dataset_pillar"); p != nil {
		dataset, _ = traverse(c.Env.Pillar, py.Str(p), ":")
	}
	if dataset == nil {
		return fail(name, "Neither 'dataset' nor 'dataset_pillar' was defined"), nil
	}
	if ser != "yaml" && ser != "json" {
		return fail(name, fmt.Sprintf("The %s serializer could not be found. It either does not exist or its prerequisites are not installed.", ser)), nil
	}
	var existing, merged *ordered.Map
	if c.Bool("merge_if_exists") && isFile(name) {
		b, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		old, err := deserializeData(ser, b)
		if err != nil {
			return fail(name, "Failed to deserialize existing data: "+err.Error()), nil
		}
		if om, ok := old.(*ordered.Map); ok {
			existing = om
			if dm, ok := dataset.(*ordered.Map); ok {
				merged = mergeRecurse(om, dm)
				if ordered.Equal(existing, merged) {
					r.Comment = fmt.Sprintf("The file %s is in the correct state", name)
					return r, nil
				}
				dataset = merged
			}
		}
	}
	contents, err := serializeData(ser, dataset)
	if err != nil {
		return nil, fmt.Errorf("serialize %s: %w", name, err)
	}
	contents += "\n"
	mode := normMode(c.Arg("mode"))
	usr, grp := owner(c), c.Arg("group")
	if c.Env.Test {
		r.Changes = file.CheckFileMeta(name, []byte(contents), usr, grp, mode, false)
		if r.Changes.Len() > 0 {
			r.Result, r.Comment = states.None, fmt.Sprintf("Dataset will be serialized and stored into %s", name)
			if !c.Bool("show_changes") {
				r.Changes.Set("diff", "<show_changes=False>")
			}
		} else {
			r.Comment = fmt.Sprintf("The file %s is in the correct state", name)
		}
	} else {
		ret, err := file.ManageFile(file.Manage{Name: name, User: usr, Group: grp, Mode: mode,
			Backup: c.Str("backup"), Makedirs: c.Bool("makedirs"), ShowChanges: c.Bool("show_changes"),
			Contents: &contents, Follow: true, Opts: c.Env.Opts}, nil)
		if err != nil {
			return nil, err
		}
		r = result(ret)
	}
	if existing != nil && merged != nil {
		r.Changes.Set("diff", recursiveDiff(merged, existing))
	}
	return r, nil
}

// mergeRecurse is salt.utils.dictupdate.merge_recurse: b's keys over a
// copy of a, nested dicts merged, lists replaced.
func mergeRecurse(a, b *ordered.Map) *ordered.Map {
	out := a.Copy()
	b.Range(func(k, v any) bool {
		if bm, ok := v.(*ordered.Map); ok {
			if am, ok := out.Value(k).(*ordered.Map); ok {
				out.Set(k, mergeRecurse(am, bm))
				return true
			}
		}
		out.Set(k, v)
		return true
	})
	return out
}

// recursiveDiff is salt.utils.dictdiffer.recursive_diff(past,
// current).diffs with missing keys ignored.
func recursiveDiff(current, past *ordered.Map) *ordered.Map {
	out := ordered.New()
	current.Range(func(k, v any) bool {
		old, ok := past.Get(k)
		switch {
		case !ok:
			out.Set(k, ordered.FromPairs("new", v, "old", "<_null_>"))
		case !ordered.Equal(v, old):
			cm, cok := v.(*ordered.Map)
			pm, pok := old.(*ordered.Map)
			if cok && pok {
				if sub := recursiveDiff(cm, pm); sub.Len() > 0 {
					out.Set(k, sub)
				}
			} else {
				out.Set(k, ordered.FromPairs("new", v, "old", old))
			}
		}
		return true
	})
	return out
}
