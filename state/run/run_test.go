package run_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/saltyaml"
	"github.com/brinesalt/brine/state/compile"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/run"
	"github.com/brinesalt/brine/state/states"
	"github.com/brinesalt/brine/state/states/cmdstate"
	"github.com/brinesalt/brine/state/states/teststate"
)

// high builds high data from one SLS file the way the compiler does.
func high(t *testing.T, sls string) *ordered.Map {
	t.Helper()
	src := map[string]string{"top.sls": "base:\n  '*':\n    - s\n", "s.sls": sls}
	hs := compile.NewHighState(memSource(src), func(_ context.Context, b []byte, rel, _, _ string) (any, error) {
		return saltyaml.Load(b, rel)
	}, func(any, string) (bool, error) { return true, nil })
	h, errs := hs.RenderHighstate(context.Background(), compile.Single("base", []string{"s"}))
	if len(errs) > 0 {
		t.Fatalf("render: %v", errs)
	}
	return h
}

type memSource map[string]string

func (m memSource) Envs() []string             { return []string{"base"} }
func (m memSource) ListStates(string) []string { return []string{"s"} }
func (m memSource) FindSLS(_ context.Context, sls, _ string) (string, []byte, bool, error) {
	s, ok := m[sls+".sls"]
	return sls + ".sls", []byte(s), ok, nil
}
func (m memSource) ReadFile(_ context.Context, rel, _ string) ([]byte, bool, error) {
	s, ok := m[rel]
	return []byte(s), ok, nil
}

func runner(test bool) *run.Runner {
	st := states.NewRegistry()
	teststate.Register(st)
	cmdstate.Register(st)
	return &run.Runner{States: st, Env: &modules.Env{Registry: modules.NewRegistry(), Test: test, Context: map[string]any{}}}
}

// line summarises one state return: id, result and comment.
func line(tag string, ret *ordered.Map) string {
	parts := strings.Split(tag, "_|-")
	c, _ := ret.Value("comment").(string)
	return fmt.Sprintf("%s.%s %v %s", parts[1], parts[3], ret.Value("result"), strings.Join(strings.Fields(c), " "))
}

func runSLS(t *testing.T, sls string, test bool) ([]string, []string) {
	t.Helper()
	res, err := runner(test).CallHigh(context.Background(), high(t, sls))
	var ce *run.CompileError
	if errors.As(err, &ce) {
		return nil, ce.Messages()
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	res.Map().Range(func(k, v any) bool {
		out = append(out, line(k.(string), v.(*ordered.Map)))
		return true
	})
	return out, nil
}

func TestOrderingAndRequisites(t *testing.T) {
	tests := []struct {
		name string
		sls  string
		test bool
		want []string
	}{{
		name: "requisites pull states forward",
		sls: `early:
  test.nop:
    - order: 1
    - require:
      - test: late
middle:
  test.nop:
    - order: 2
late:
  test.nop:
    - order: 3
`,
		want: []string{"late.nop true Success!", "early.nop true Success!", "middle.nop true Success!"},
	}, {
		name: "failed requisite cascades naming the direct requisite",
		sls: `broken:
  test.fail_without_changes: []
needs_broken:
  test.nop:
    - require:
      - test: broken
needs_needs:
  test.nop:
    - require:
      - test: needs_broken
`,
		want: []string{"broken.fail_without_changes false Failure!",
			"needs_broken.nop false One or more requisite failed: s.broken",
			"needs_needs.nop false One or more requisite failed: s.needs_broken"},
	}, {
		name: "missing requisite fails only that state",
		sls: `lonely:
  test.nop:
    - require:
      - test: does_not_exist
other:
  test.nop: []
`,
		want: []string{"lonely.nop false The following requisites were not found: require: test: does_not_exist",
			"other.nop true Success!"},
	}, {
		name: "onchanges and onfail that do not fire",
		sls: `quiet:
  test.succeed_without_changes: []
fine:
  test.succeed_without_changes: []
on_change:
  test.nop:
    - onchanges:
      - test: quiet
on_fail:
  test.nop:
    - onfail:
      - test: fine
`,
		want: []string{"quiet.succeed_without_changes true Success!", "fine.succeed_without_changes true Success!",
			"on_change.nop true State was not run because none of the onchanges reqs changed",
			"on_fail.nop true State was not run because onfail req did not change"},
	}, {
		name: "onfail fires when any requisite failed; onfail_all needs all",
		sls: `bad:
  test.fail_without_changes: []
good:
  test.succeed_without_changes: []
any_failed:
  test.nop:
    - onfail:
      - test: bad
      - test: good
all_failed:
  test.nop:
    - onfail_all:
      - test: bad
      - test: good
`,
		want: []string{"bad.fail_without_changes false Failure!", "good.succeed_without_changes true Success!",
			"any_failed.nop true Success!",
			"all_failed.nop true State was not run because onfail req did not change"},
	}, {
		name: "watch fires mod_watch; watch_any tolerates failures",
		sls: `changer:
  test.succeed_with_changes: []
failer:
  test.fail_without_changes: []
watcher:
  test.succeed_without_changes:
    - watch:
      - test: changer
watch_any:
  test.succeed_without_changes:
    - watch_any:
      - test: changer
      - test: failer
plain_watch_fails:
  test.succeed_without_changes:
    - watch:
      - test: changer
      - test: failer
`,
		want: []string{"changer.succeed_with_changes true Success!", "failer.fail_without_changes false Failure!",
			"watcher.succeed_without_changes true Watch statement fired.",
			"watch_any.succeed_without_changes true Watch statement fired.",
			"plain_watch_fails.succeed_without_changes false One or more requisite failed: s.failer"},
	}, {
		name: "prereq runs the pre-state only when the target would change",
		sls: `stop:
  test.succeed_with_changes:
    - prereq:
      - test: deploy
deploy:
  test.succeed_with_changes: []
stop_noop:
  test.succeed_with_changes:
    - prereq:
      - test: noop
noop:
  test.succeed_without_changes: []
`,
		want: []string{"stop.succeed_with_changes true Success!", "deploy.succeed_with_changes true Success!",
			"stop_noop.succeed_with_changes true No changes detected", "noop.succeed_without_changes true Success!"},
	}, {
		name: "failhard drops the states after the failure",
		sls: `before:
  test.nop: []
hard:
  test.fail_without_changes:
    - failhard: True
after:
  test.nop: []
`,
		want: []string{"before.nop true Success!", "hard.fail_without_changes false Failure!"},
	}, {
		name: "test mode: null results, predicted changes fire onchanges",
		test: true,
		sls: `changer:
  test.succeed_with_changes: []
follower:
  test.succeed_with_changes:
    - onchanges:
      - test: changer
fails:
  test.fail_without_changes: []
`,
		want: []string{"changer.succeed_with_changes <nil> If we weren't testing, this would be successful with changes",
			"follower.succeed_with_changes <nil> If we weren't testing, this would be successful with changes",
			"fails.fail_without_changes false If we weren't testing, this would be a failure!"},
	}, {
		name: "requisite forms: name, bare id, glob, sls (which includes itself), names entry",
		sls: `named:
  test.nop:
    - name: the-name
many:
  test.nop:
    - names:
      - alpha
      - beta
by_name:
  test.nop:
    - require:
      - test: the-name
bare:
  test.nop:
    - require:
      - named
glob:
  test.nop:
    - require:
      - test: nam*
by_sls:
  test.nop:
    - require:
      - sls: s
one_name:
  test.nop:
    - require:
      - test: beta
`,
		want: []string{"named.nop true Success!", "many.nop true Success!", "many.nop true Success!",
			"by_name.nop true Success!", "bare.nop true Success!", "glob.nop true Success!",
			"by_sls.nop false Recursive requisite found", "one_name.nop true Success!"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, errs := runSLS(t, tc.sls, tc.test)
			if len(errs) > 0 {
				t.Fatalf("compile errors: %v", errs)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("run (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCompileErrorsStopTheRun(t *testing.T) {
	_, errs := runSLS(t, `chicken:
  test.nop:
    - require:
      - test: egg
egg:
  test.nop:
    - require:
      - test: chicken
bystander:
  test.nop: []
`, false)
	want := []string{`A recursive requisite was found, SLS "s" ID "egg" ID "chicken"`}
	if diff := cmp.Diff(want, errs); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}

func TestInvalidKeywordAbortsTheJob(t *testing.T) {
	_, err := runner(false).CallHigh(context.Background(), high(t, `cfg:
  test.configurable_test_state:
    - not_an_argument: 1
`))
	if err == nil || err.Error() != "'not_an_argument' is an invalid keyword argument for 'test.configurable_test_state'" {
		t.Fatalf("err = %v", err)
	}
}

func TestUnlessOnlyifCreates(t *testing.T) {
	got, _ := runSLS(t, `skipped_onlyif:
  test.succeed_with_changes:
    - onlyif: "false"
skipped_unless:
  test.succeed_with_changes:
    - unless:
      - "true"
      - "true"
runs_unless:
  test.succeed_with_changes:
    - unless:
      - "true"
      - "false"
skipped_creates:
  test.succeed_with_changes:
    - creates: /
watcher:
  test.succeed_without_changes:
    - watch:
      - test: skipped_onlyif
`, false)
	want := []string{"skipped_onlyif.succeed_with_changes true onlyif condition is false",
		"skipped_unless.succeed_with_changes true unless condition is true",
		"runs_unless.succeed_with_changes true Success!",
		"skipped_creates.succeed_with_changes true / exists",
		"watcher.succeed_without_changes true Success!"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("run (-want +got):\n%s", diff)
	}
}

func TestListenAppendsModWatch(t *testing.T) {
	got, _ := runSLS(t, `changer:
  test.succeed_with_changes: []
listener:
  test.succeed_without_changes:
    - listen:
      - test: changer
after:
  test.nop: []
`, false)
	want := []string{"changer.succeed_with_changes true Success!", "listener.succeed_without_changes true Success!",
		"after.nop true Success!", "listener_listener.mod_watch true Watch statement fired."}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("run (-want +got):\n%s", diff)
	}
}
