package jinja

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// fakeSalt records calls and answers from a table.
type fakeSalt struct {
	calls []string
	funcs map[string]func(args []any, kw *ordered.Map) (any, error)
}

func (f *fakeSalt) Call(_ context.Context, fun string, args []any, kw *ordered.Map) (any, error) {
	f.calls = append(f.calls, fmt.Sprintf("%s %v %v", fun, args, kw.Keys()))
	fn, ok := f.funcs[fun]
	if !ok {
		return nil, fmt.Errorf("'%s' is not available", fun)
	}
	if !argsFit(fun, args) {
		return nil, fmt.Errorf("%s: bad arguments %v", fun, args)
	}
	return fn(args, kw)
}

// argsFit keeps the fakes (and the fuzzer driving them) to the argument
// shapes they understand.
func argsFit(fun string, args []any) bool {
	switch fun {
	case "pillar.get", "grains.get", "cmd.run":
		if len(args) == 0 {
			return false
		}
		_, ok := args[0].(string)
		return ok
	case "grains.filter_by":
		if len(args) == 0 {
			return false
		}
		_, ok := args[0].(*ordered.Map)
		return ok
	case "test.echo":
		return len(args) == 1
	}
	return true
}

func (f *fakeSalt) Has(fun string) bool { _, ok := f.funcs[fun]; return ok }

func newFakeSalt() *fakeSalt {
	return &fakeSalt{funcs: map[string]func([]any, *ordered.Map) (any, error){
		"pillar.get": func(args []any, kw *ordered.Map) (any, error) {
			if args[0] == "web:port" {
				return 8080, nil
			}
			if d, ok := kw.Get("default"); ok {
				return d, nil
			}
			if len(args) > 1 {
				return args[1], nil
			}
			return "", nil
		},
		"grains.filter_by": func(args []any, _ *ordered.Map) (any, error) {
			m := args[0].(*ordered.Map)
			return m.Value("Debian"), nil
		},
		"cmd.run": func(args []any, _ *ordered.Map) (any, error) {
			return "out:" + args[0].(string), nil
		},
		"test.list": func([]any, *ordered.Map) (any, error) {
			return []any{"a", ordered.FromPairs("k", int64(1))}, nil
		},
		"test.fail": func([]any, *ordered.Map) (any, error) {
			return nil, errors.New("command failed: boom")
		},
	}}
}

func TestSaltCalls(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"subscript", `{{ salt['pillar.get']('web:port') }}`, "8080"},
		{"kwargs", `{{ salt['pillar.get']('x', default='d') }}`, "d"},
		{"attribute", `{{ salt.cmd.run('id') }}`, "out:id"},
		{"mixed", `{{ salt['cmd']['run']('ls') }}`, "out:ls"},
		{"dict arg", `{{ salt['grains.filter_by']({'Debian': {'pkg': 'apache2'}}).pkg }}`, "apache2"},
		{"result model", `{% set l = salt['test.list']() %}{% do l.append(2) %}{{ l }} {{ l[1].k + 1 }}`, "['a', {'k': 1}, 2] 2"},
		{"in salt", `{{ 'cmd.run' in salt }} {{ 'nope.fun' in salt }}`, "True False"},
		{"missing function", `{{ salt['nope.fun'] is defined }} {{ salt.get('x') if false else 'ok' }}`, "False ok"},
		{"set then call", `{% set run = salt['cmd.run'] %}{{ run('x') }}`, "out:x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Render(context.Background(), tt.src, Options{Salt: newFakeSalt()})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestSaltCallArgs(t *testing.T) {
	fs := newFakeSalt()
	_, err := Render(context.Background(), `{{ salt['pillar.get']('a', (1, 2), k=[3], default=none) }}`, Options{Salt: fs})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"pillar.get [a [1 2]] [k default]"}
	if diff := cmp.Diff(want, fs.calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

func TestSaltCallError(t *testing.T) {
	_, err := Render(context.Background(), "a\n{{ salt['test.fail']() }}\n", Options{Name: "x.sls", Salt: newFakeSalt()})
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v, want *Error", err)
	}
	want := &Error{
		Name:    "x.sls",
		Line:    2,
		Msg:     "Problem running salt function in Jinja template: command failed: boom",
		Context: "---\na\n{{ salt['test.fail']() }}    <======================\n---",
	}
	if diff := cmp.Diff(want, e, cmpopts.IgnoreUnexported(Error{})); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if err == nil || !strings.Contains(fmt.Sprint(errors.Unwrap(err)), "boom") {
		t.Errorf("cause not reachable through Unwrap: %v", errors.Unwrap(err))
	}
}

func TestNoSaltCaller(t *testing.T) {
	_, err := Render(context.Background(), "{{ salt['cmd.run']('x') }}", Options{})
	if err == nil || !strings.Contains(err.Error(), "Jinja variable 'salt' is undefined") {
		t.Fatalf("err = %v", err)
	}
}

func TestErrorString(t *testing.T) {
	src := "l1\nl2\nl3\nl4\nl5\nl6\nl7\n{{ nope }}\nl9\nl10\nl11\nl12\nl13\nl14\nl15\n"
	_, err := Render(context.Background(), src, Options{Name: "big.sls"})
	want := "Jinja variable 'nope' is undefined; line 8\n\n---\n[...]\nl3\nl4\nl5\nl6\nl7\n{{ nope }}    <======================\nl9\nl10\nl11\nl12\nl13\n[...]\n---"
	if err == nil {
		t.Fatal("no error")
	}
	if diff := cmp.Diff(want, err.Error()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestErrorInIncludedTemplate(t *testing.T) {
	files := map[string]string{"lib/macros.jinja": "{% macro m() %}\n{{ undefined_thing }}\n{% endmacro %}\n"}
	src := "{% from 'lib/macros.jinja' import m %}\n{{ m() }}\n"
	_, err := Render(context.Background(), src, Options{Name: "top.sls", Loader: mapLoader(files)})
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v", err)
	}
	want := &Error{
		Name: "top.sls",
		Msg: "Jinja variable 'undefined_thing' is undefined\nlib/macros.jinja(2):\n" +
			"---\n{% macro m() %}\n{{ undefined_thing }}    <======================\n{% endmacro %}\n---",
	}
	if diff := cmp.Diff(want, e, cmpopts.IgnoreUnexported(Error{})); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestSyntaxErrorInImport(t *testing.T) {
	files := map[string]string{"bad.jinja": "ok\n{% if %}\n"}
	_, err := Render(context.Background(), "{% import 'bad.jinja' as b %}", Options{Name: "top.sls", Loader: mapLoader(files)})
	if err == nil || !strings.HasPrefix(err.Error(), "Jinja syntax error: Expected an expression, got 'end of statement block'\nbad.jinja(2):") {
		t.Fatalf("err = %v", err)
	}
}

func TestRelativeImports(t *testing.T) {
	files := map[string]string{
		"web/map.jinja":     "{% set port = 80 %}",
		"map.jinja":         "{% set port = 10 %}",
		"web/sub/x.jinja":   "{% from '../map.jinja' import port %}{% set p = port + 1 %}",
		"common/lib.jinja":  "{% set v = 'common' %}",
		"web/init.sls":      "",
		"escape/evil.jinja": "",
	}
	tests := []struct {
		name, src, want string
		vars            map[string]any
	}{
		{"dot", "{% from './map.jinja' import port %}{{ port }}", "80", map[string]any{"tpldir": "web"}},
		// Salt resolves "../" against the environment's tpldir, which a
		// relative load leaves at the top template's directory, not
		// against the importing file (salt/utils/jinja.py get_source).
		{"dotdot chain", "{% from './sub/x.jinja' import p %}{{ p }}", "11", map[string]any{"tpldir": "web"}},
		{"root", "{% from 'common/lib.jinja' import v %}{{ v }}", "common", map[string]any{"tpldir": "web"}},
		{"name fallback", "{% from './map.jinja' import port %}{{ port }}", "80", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Render(context.Background(), tt.src, Options{Name: "web/init.sls", Vars: tt.vars, Loader: mapLoader(files)})
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
	_, err := Render(context.Background(), "{% include '../../etc/passwd' %}", Options{Vars: map[string]any{"tpldir": "web"}, Loader: mapLoader(files)})
	if !errors.Is(err, ErrTemplateNotFound) {
		t.Errorf("escaping include: err = %v, want ErrTemplateNotFound", err)
	}
}

func TestRenderErrorsAreTyped(t *testing.T) {
	for _, src := range []string{"{{ x }}", "{% if %}", "{{ 1/0 }}", "{% break %}", "{{ raise('no') }}"} {
		_, err := Render(context.Background(), src, Options{Name: "t.sls"})
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("%q: err = %#v, want *Error", src, err)
		}
	}
	_, err := Render(context.Background(), "{% break %}", Options{})
	if err == nil || err.Error() != "Jinja error: 'break' outside loop; line 1\n\n---\n{% break %}    <======================\n---" {
		t.Errorf("break outside loop: %v", err)
	}
}

func TestContextCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Render(ctx, "{% for i in range(100) %}{{ i }}{% endfor %}", Options{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestRecursionLimit(t *testing.T) {
	_, err := Render(context.Background(), "{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}", Options{})
	if err == nil || !strings.Contains(err.Error(), "maximum recursion depth exceeded") {
		t.Fatalf("err = %v", err)
	}
	files := map[string]string{"a": "{% include 'a' %}"}
	_, err = Render(context.Background(), "{% include 'a' %}", Options{Loader: mapLoader(files)})
	if err == nil || !strings.Contains(err.Error(), "maximum recursion depth exceeded") {
		t.Fatalf("include loop: err = %v", err)
	}
}

func TestGoVars(t *testing.T) {
	vars := map[string]any{
		"n":     int64(5),
		"f":     float32(1.5),
		"names": []string{"b", "a"},
		"m":     map[string]any{"z": 1, "a": []any{true, nil}},
		"om":    ordered.FromPairs("z", 1, "a", 2),
	}
	got, err := Render(context.Background(), "{{ n + 1 }} {{ f }} {{ names|sort }} {{ m }} {{ om }}", Options{Vars: vars})
	if err != nil {
		t.Fatal(err)
	}
	want := "6 1.5 ['a', 'b'] {'a': [True, None], 'z': 1} {'z': 1, 'a': 2}"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	// The caller's data is not mutated by the template.
	if _, err := Render(context.Background(), "{% do om.update({'x': 1}) %}", Options{Vars: vars}); err != nil {
		t.Fatal(err)
	}
	if vars["om"].(*ordered.Map).Has("x") {
		t.Error("template mutated the caller's map")
	}
}

func TestLoadFilterValuesAreModel(t *testing.T) {
	got, err := Render(context.Background(), "{% set d = 'a: 0644\\nb: [1, 2]\\nc: yes'|load_yaml %}{{ d.a }} {{ d.b }} {{ d.c }}", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got != "644 [1, 2] True" {
		t.Errorf("got %q", got)
	}
}

func TestImportYAMLError(t *testing.T) {
	files := map[string]string{"bad.yaml": "a: [1,\n"}
	_, err := Render(context.Background(), "{% import_yaml 'bad.yaml' as b %}", Options{Loader: mapLoader(files)})
	if err == nil || !strings.HasPrefix(err.Error(), "Jinja syntax error: Encountered error loading yaml: ") {
		t.Fatalf("err = %v", err)
	}
}

func TestSaltMissingFunction(t *testing.T) {
	_, err := Render(context.Background(), "{{ salt['nope.fun']() }}", Options{Salt: newFakeSalt()})
	if err == nil || !strings.HasPrefix(err.Error(), "Jinja variable 'salt.loader.lazy.LazyLoader object' has no attribute 'nope.fun'") {
		t.Fatalf("err = %v", err)
	}
}

func TestSaltExtraFilters(t *testing.T) {
	tests := []struct{ src, want string }{
		{"{{ '10.0.0.1'|is_ip }} {{ '::1'|is_ipv6 }} {{ '::1'|is_ipv4 }} {{ 'x'|is_ip }} {{ '10.0.0.0/8'|is_ipv4 }}", "True True False False True"},
		{"{{ ['10.0.0.1', 'fe80::1', 'junk', '8.8.8.8']|ipaddr }} {{ ['10.0.0.1', '8.8.8.8']|ipv4('private') }} {{ '8.8.8.8'|ipaddr('public') }} {{ '10.1.1.1'|ipaddr('public') }}", "['10.0.0.1', '8.8.8.8', 'fe80::1'] ['10.0.0.1'] 8.8.8.8 None"},
		{"{{ {}|set_dict_key_value('a:b', 1) }} {{ {'a': {'l': [1]}}|append_dict_key_value('a:l', 2) }} {{ {}|extend_dict_key_value('x', [1, 2]) }} {{ {'a': {}}|update_dict_key_value('a', {'k': 'v'}) }}",
			"{'a': {'b': 1}} {'a': {'l': [1, 2]}} {'x': [1, 2]} {'a': {'k': 'v'}}"},
		{"{{ 'Hello'|md5 }} {{ 'a'|sha1 }} {{ 'x'|base64_encode }} {{ 'eA=='|base64_decode }}", "8b1a9953c4611296a827abf8c47804d7 86f7e437faa5a7fce15d1ddcb9eaeaea377667b8 eA== x"},
		{"{{ 'foo'|uuid }}", "bde7dcdd-6fb7-59a9-88fe-b6f80fe092be"},
		{"{{ [1, [2, [3, none]]]|flatten }} {{ [1, 2, 3, 4]|avg }} {{ [1, 2]|union([2, 3]) }} {{ [1, 2]|intersect([2, 3]) }} {{ [1, 2]|difference([2]) }} {{ [1, 2]|symmetric_difference([2, 3]) }}", "[1, 2, 3] 2.5 [1, 2, 3] [2] [1] [1, 3]"},
		{"{{ {'a': {'b': [1, 2]}}|traverse('a:b:1') }} {{ {}|traverse('x', 'dflt') }} {{ '12'|to_num + 1 }} {{ 'x'|to_num }}", "2 dflt 13 x"},
		{"{{ 1699963200|strftime('%Y') }} {{ '1699963200'|strftime }}", "2023 2023-11-14"},
		{"{{ [true, false]|exactly_one_true }} {{ ['a b', 'c']|sorted_ignorecase }} {{ 'CamelCase'|to_snake_case }} {{ 'snake_case'|to_camelcase }}", "True ['a b', 'c'] camel_case snakeCase"},
		{"{{ 'a.b*'|regex_escape }} {{ {'a': 1}|to_entries }} {{ [{'key': 'k', 'value': 2}]|from_entries }}", "a\\.b\\* [{'key': 'a', 'value': 1}] {'k': 2}"},
		{"{{ 'abc'|method_call('upper') }} {{ [1]|is_list }} {{ ''|is_empty }} {{ 'a b'|contains_whitespace }} {{ 'ff'|is_hex }}", "ABC True True True True"},
		{"{{ [7]|random }} {{ 5|random_hash|length }} {{ 5|random_hash('sha256')|length }} {{ [1, 2, 3]|random_sample(2, seed='s')|length }} {{ [1, 2, 3]|random_shuffle|sort }} {{ [1, 2, 3]|random_shuffle(seed=1) == [1, 2, 3]|random_shuffle(seed=1) }}", "7 32 64 2 [1, 2, 3] True"},
		{"{{ {'b': 1, 'a': 'x'}|python }} {{ 'x'|yaml_squote }} {{ [1, 2]|json_encode_list }}", "{'b': 1, 'a': 'x'} 'x' [1, 2]"},
	}
	runTable(t, tests)
}

// runTable renders each template with empty Options and compares.
func runTable(t *testing.T, tests []struct{ src, want string }) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			got, err := Render(context.Background(), tt.src, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestSelfContainingValues(t *testing.T) {
	tests := []struct{ src, want string }{
		{"{% set l = [1] %}{% do l.append(l) %}{{ l }}", "[1, [...]]"},
		{"{% set d = {} %}{% do d.update({'me': d}) %}{{ d }}", "{'me': {...}}"},
		{"{% set ns = namespace() %}{% set ns.me = ns %}{{ ns.me is defined }}", "True"},
		{"{% set l = [] %}{% do l.append(l) %}{{ l == l }} {{ [l] == [l] }}", "True True"},
	}
	runTable(t, tests)
	for _, src := range []string{
		"{% set l = [] %}{% do l.append(l) %}{{ l|json }}",
		"{% set l = [] %}{% do l.append(l) %}{{ l|yaml }}",
		"{% set l = [] %}{% do l.append(l) %}{{ l|flatten }}",
		"{% set a = [] %}{% set b = [] %}{% do a.append(a) %}{% do b.append(b) %}{{ a == b }}{{ a < b }}",
	} {
		// Python fails on these (ValueError, RecursionError); Brine must
		// not hang or crash, whatever it answers.
		_, _ = Render(context.Background(), src, Options{})
	}
}

func TestLoadYAMLErrorExcerpt(t *testing.T) {
	_, err := Render(context.Background(), "{% load_yaml as x %}\na: 1\nb: x: y\nc: 3\n{% endload %}", Options{})
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v", err)
	}
	if !strings.HasPrefix(e.Msg, "Jinja syntax error: Encountered error loading yaml: ") || !strings.Contains(e.Msg, "<======================") {
		t.Errorf("Msg = %q", e.Msg)
	}
}
