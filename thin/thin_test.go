package thin_test

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/coregrains"
	"github.com/brinesalt/brine/state/modules"
	_ "github.com/brinesalt/brine/state/modules/allmodules"
	"github.com/brinesalt/brine/thin"
	"github.com/brinesalt/brine/thin/frame"
)

func callJSON(t *testing.T, job string) (*frame.Result, int, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := thin.Main(context.Background(), []string{"call"}, strings.NewReader(job), &out, &errOut)
	res, err := frame.DecodeResult(out.Bytes())
	if err != nil {
		t.Fatalf("decode %q: %v (stderr %q)", out.String(), err, errOut.String())
	}
	return res, code, errOut.String()
}

func TestCallEndToEnd(t *testing.T) {
	echoDoc := mustDoc(t, "test.echo")
	tests := []struct {
		name    string
		job     string
		want    any
		retcode int
	}{
		{"ping", `{"jid":"1","id":"web1","fun":"test.ping"}`, true, 0},
		{"echo", `{"fun":"test.echo","arg":["hi"]}`, "hi", 0},
		{"missing arg", `{"fun":"test.echo"}`,
			"Passed invalid arguments to test.echo: echo() missing 1 required positional argument: 'text'\n" + echoDoc, 1},
		{"bad kwarg", `{"fun":"test.echo","arg":["x"],"kwarg":{"foo":"bar"}}`,
			"ERROR executing 'test.echo': The following keyword arguments are not valid: foo=bar", 1},
		{"unknown", `{"fun":"foo.bar"}`, "'foo.bar' is not available.", 1},
		{"unknown with docs", `{"fun":"test.ech"}`, ordered.FromPairs("test.echo", echoDoc, "test.ech", "'test.ech' is not available."), 1},
		{"exception", `{"fun":"test.exception","arg":["boom"]}`, "The minion function caused an exception: Exception: boom", 1},
		{"execution error", `{"fun":"cmd.run","arg":["true"],"kwarg":{"cwd":"rel"}}`,
			"ERROR: Specified cwd 'rel' either not absolute or does not exist", 1},
		{"invocation error", `{"fun":"test.raise_exception","arg":["salt.exceptions.SaltInvocationError","nope"]}`,
			"ERROR executing 'test.raise_exception': nope", 1},
		{"context retcode", `{"fun":"test.retcode","arg":[7]}`, true, 7},
		{"cmd.run retcode", `{"fun":"cmd.run","arg":["echo out; exit 3"]}`, "out", 3},
		{"cmd.run via shell", `{"fun":"cmd.run","arg":["echo a | tr a b"]}`, "b", 0},
		{"result false", `{"fun":"grains.set","arg":["roles","x"],"grains":{"roles":["a"]},"opts":{"config_dir":"CONFDIR"}}`, nil, 1},
		{"roster grains", `{"fun":"grains.get","arg":["role"],"grains":{"role":"db"}}`, "db", 0},
		{"roster grains override", `{"fun":"grains.get","arg":["os"],"grains":{"os":"Plan9"}}`, "Plan9", 0},
		{"pillar", `{"fun":"test.conf_test","pillar":{"test.foo":"p"}}`, "p", 0},
	}
	confDir := t.TempDir()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, code, _ := callJSON(t, strings.ReplaceAll(tt.job, "CONFDIR", confDir))
			if res.Retcode != tt.retcode || code != tt.retcode {
				t.Errorf("retcode = %d, exit %d, want %d (return %v)", res.Retcode, code, tt.retcode, res.Return)
			}
			if tt.want == nil {
				return
			}
			if diff := cmp.Diff(tt.want, res.Return, cmp.Comparer(func(a, b *ordered.Map) bool {
				ja, _ := a.MarshalJSON()
				jb, _ := b.MarshalJSON()
				return string(ja) == string(jb)
			})); diff != "" {
				t.Errorf("return (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCallResultFields(t *testing.T) {
	res, _, _ := callJSON(t, `{"jid":"20260101000000000001","id":"web1","fun":"test.ping"}`)
	want := frame.Result{ID: "web1", JID: "20260101000000000001", Fun: "test.ping", Return: true}
	if diff := cmp.Diff(want, *res); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	res, _, _ = callJSON(t, `{"fun":"test.ping"}`)
	if len(res.JID) != 20 || res.ID == "" {
		t.Errorf("generated jid %q / id %q", res.JID, res.ID)
	}
}

func TestMainCommands(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := thin.Main(context.Background(), []string{"version"}, nil, &out, &errOut); code != 0 || !strings.Contains(out.String(), "Salt 3006.19") {
		t.Errorf("version: exit %d, %q", code, out.String())
	}
	if code := thin.Main(context.Background(), []string{"nope"}, nil, &out, &errOut); code != thin.ExUsage {
		t.Errorf("unknown command exit %d", code)
	}
	if code := thin.Main(context.Background(), []string{"call"}, strings.NewReader("not json"), &out, &errOut); code != thin.ExUsage {
		t.Errorf("bad job exit %d", code)
	}
}

func TestRegisterDuplicatePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("duplicate registration did not panic")
		}
	}()
	thin.Register(thin.Command{Name: "call", Run: func(context.Context, *thin.Invocation) int { return 0 }})
}

// TestExecuteFreshRegistry drives Execute with its own registry and
// grains, independent of the global registry.
func TestExecuteFreshRegistry(t *testing.T) {
	r := modules.NewRegistry()
	r.Register(modules.Function{Name: "x.result", Doc: "d", Fn: func(_ context.Context, c *modules.Call) (any, error) {
		return ordered.FromPairs("result", false, "grain", c.Env.Grains().Value("os")), nil
	}})
	r.Register(modules.Function{Name: "x.panic", Doc: "d", Fn: func(context.Context, *modules.Call) (any, error) {
		panic("kaboom")
	}})
	gather := func(context.Context, coregrains.GatherOptions) (*ordered.Map, error) {
		return ordered.FromPairs("os", "Fake", "fqdn", "fake.example"), nil
	}
	res := thin.Execute(context.Background(), &frame.Job{Fun: "x.result"}, thin.Options{Registry: r, Gather: gather, Log: io.Discard})
	if res.Retcode != 1 || res.ID != "fake.example" {
		t.Errorf("result false: %+v", res)
	}
	if m := res.Return.(*ordered.Map); m.Value("grain") != "Fake" {
		t.Errorf("grains not passed: %v", m)
	}
	res = thin.Execute(context.Background(), &frame.Job{Fun: "x.panic"}, thin.Options{Registry: r, Gather: gather})
	if s, _ := res.Return.(string); res.Retcode != 1 || !strings.HasPrefix(s, "The minion function caused an exception: panic: kaboom") {
		t.Errorf("panic: %+v", res)
	}
}

func mustDoc(t *testing.T, name string) string {
	f, err := modules.Default.Lookup(&modules.Env{}, name)
	if err != nil {
		t.Fatal(err)
	}
	return f.Doc
}
