package wrapper

import (
	"context"
	"crypto/rsa"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/crypt"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/saltyaml"
	"github.com/brinesalt/brine/roster"
	"github.com/brinesalt/brine/sshexec"
)

func TestBootstrapArgsAndConfig(t *testing.T) {
	o := &MasterLink{RetPort: 4506, PublishPort: 4505}
	for _, tc := range []struct {
		args []string
		want string // the config, or the error
	}{
		{[]string{"master=10.0.0.1"}, "master: 10.0.0.1\nid: web1\n"},
		{[]string{"master=salt.example", "id=other", `minion_opts={grains: {role: web}, recon_max: 500, master: ignored}`},
			"master: salt.example\nid: other\ngrains:\n  role: web\nrecon_max: 500\n"},
		{[]string{}, "master=<address> is required"},
		{[]string{"10.0.0.1"}, "keyword arguments only"},
		{[]string{"master=m", "timeout=soon"}, "timeout=soon"},
		{[]string{"master=m", "minion_opts=[1]"}, "minion_opts must be a mapping"},
	} {
		args, kw := saltyaml.ParseInput(tc.args)
		a, err := parseBootstrapArgs(args, kw, o)
		got := ""
		if err != nil {
			got = err.Error()
		} else {
			id := a.id
			if id == "" {
				id = "web1"
			}
			conf, err := a.minionConfig(id)
			if err != nil {
				t.Fatal(err)
			}
			got = strings.TrimPrefix(conf, conf[:strings.Index(conf, "\n")+1]) // drop the header comment
		}
		if !strings.Contains(got, tc.want) || (err == nil && got != tc.want) {
			t.Errorf("%v: got %q, want %q", tc.args, got, tc.want)
		}
	}
	// Ports other than Salt's defaults are written for the minion.
	a, _ := parseBootstrapArgs(nil, ordered.FromPairs("master", "m"), &MasterLink{RetPort: 14506, PublishPort: 14505})
	if conf, _ := a.minionConfig("x"); !strings.Contains(conf, "master_port: 14506\npublish_port: 14505\n") {
		t.Errorf("ports: %s", conf)
	}
}

// keyHost is a host whose minion_bootstrap.key answers pub.
func keyHost(pub string) *sshexec.Host {
	return &sshexec.Host{Target: &roster.Target{ID: "web1"},
		Call: func(_ context.Context, fun string, _ []any, _ *ordered.Map) (any, int, error) {
			if fun != "minion_bootstrap.key" {
				return nil, 1, errors.New("unexpected " + fun)
			}
			return pub, 0, nil
		}}
}

func TestSettleKey(t *testing.T) {
	k1 := string(crypt.EncodePublicKey(&mustKey(t).PublicKey))
	k2 := string(crypt.EncodePublicKey(&mustKey(t).PublicKey))
	for _, tc := range []struct {
		name              string
		hostPub, accepted string
		force             bool
		wantErr           string
		wantPEM, created  bool
		wantPub           string
	}{
		{name: "fresh host", wantPEM: true, created: true},
		{name: "host key already accepted", hostPub: k1, accepted: k1, wantPub: k1},
		{name: "host key not yet accepted", hostPub: k1, wantPub: k1, created: true},
		{name: "another key accepted", hostPub: k1, accepted: k2, wantErr: "force=True"},
		{name: "another key accepted, forced", hostPub: k1, accepted: k2, force: true, wantPEM: true, created: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "master.pub"), []byte("MASTER PUB\n"), 0o644)
			os.MkdirAll(filepath.Join(dir, "minions_pre"), 0o700)
			os.WriteFile(filepath.Join(dir, "minions_pre", "web1"), []byte(tc.hostPub), 0o644)
			if tc.accepted != "" {
				os.MkdirAll(filepath.Join(dir, "minions"), 0o700)
				os.WriteFile(filepath.Join(dir, "minions", "web1"), []byte(tc.accepted), 0o644)
			}
			b := &Bootstrap{}
			k, err := b.settleKey(context.Background(), keyHost(tc.hostPub), &MasterLink{PKIDir: dir, KeySize: 2048}, "web1", tc.force)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				if got, _ := os.ReadFile(filepath.Join(dir, "minions", "web1")); string(got) != tc.accepted {
					t.Error("a refused bootstrap changed the accepted key")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (k.pem != "") != tc.wantPEM || k.created != tc.created || k.masterPub != "MASTER PUB\n" {
				t.Fatalf("pem %v created %v masterPub %q", k.pem != "", k.created, k.masterPub)
			}
			if tc.wantPub != "" && k.pub != tc.wantPub {
				t.Errorf("pub %q, want %q", k.pub, tc.wantPub)
			}
			if k.pem != "" {
				priv, err := crypt.ParsePrivateKey([]byte(k.pem), "")
				if err != nil || string(crypt.EncodePublicKey(&priv.PublicKey)) != k.pub {
					t.Fatalf("the private key does not match the public key: %v", err)
				}
			}
			acc, _ := os.ReadFile(filepath.Join(dir, "minions", "web1"))
			if diff := cmp.Diff(crypt.CleanKey(k.pub), crypt.CleanKey(string(acc))); diff != "" {
				t.Errorf("accepted key: %s", diff)
			}
			if _, err := os.Stat(filepath.Join(dir, "minions_pre", "web1")); tc.created && err == nil {
				t.Error("the pending copy is still there")
			}
		})
	}
}

func TestSettleKeyRefusals(t *testing.T) {
	dir := t.TempDir()
	b := &Bootstrap{}
	o := &MasterLink{PKIDir: dir, KeySize: 2048}
	if _, err := b.settleKey(context.Background(), keyHost(""), o, "web1", false); err == nil || !strings.Contains(err.Error(), "master.pub") {
		t.Errorf("no master key: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "master.pub"), []byte("MASTER PUB\n"), 0o644)
	if _, err := b.settleKey(context.Background(), keyHost(""), o, "../evil", false); err == nil {
		t.Error("an id that escapes pki_dir was accepted")
	}
	os.MkdirAll(filepath.Join(dir, "minions_rejected"), 0o700)
	os.WriteFile(filepath.Join(dir, "minions_rejected", "web1"), []byte("K"), 0o644)
	if _, err := b.settleKey(context.Background(), keyHost(""), o, "web1", true); err == nil || !strings.Contains(err.Error(), "salt-key -d web1") {
		t.Errorf("rejected key: %v", err)
	}
}

func TestBootstrapResultShape(t *testing.T) {
	r := &bootstrapResult{}
	r.add(step{ID: "config", Name: "/etc/salt/minion", result: true, comment: "ok"})
	r.fail("authenticated", "web1", errors.New("timed out"))
	if !r.failed || r.steps.Len() != 2 {
		t.Fatalf("%v %v", r.failed, r.steps)
	}
	s := r.steps.Value("minion_|-authenticated_|-web1_|-bootstrap").(*ordered.Map)
	if s.Value("result") != false || s.Value("comment") != "timed out" || s.Value("__run_num__") != 1 {
		t.Errorf("%v", s)
	}
}

func mustKey(t *testing.T) *rsa.PrivateKey {
	t.Helper()
	k, err := crypt.GenerateKey(2048)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestIsPingReturn(t *testing.T) {
	jids := map[string]bool{"20261201000000000001": true}
	for tag, want := range map[string]bool{
		"salt/job/20261201000000000001/ret/web1":  true,
		"salt/job/20261201000000000001/ret/web10": false,
		"salt/job/20261201000000000002/ret/web1":  false,
		"salt/job/20261201000000000001/new":       false,
	} {
		if got := isPingReturn(tag, "web1", jids); got != want {
			t.Errorf("%s: %v, want %v", tag, got, want)
		}
	}
}

func TestBootstrapWithoutMaster(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "sock", "brine-master.sock")
	link := &MasterLink{PKIDir: filepath.Join(dir, "pki"), KeySize: 2048, RetPort: 4506, PublishPort: 4505, Socket: sock,
		Events: func(context.Context) (<-chan Event, error) {
			return nil, errors.New("is salt-master running with this configuration? dial: no such file")
		}}
	b := &Bootstrap{Connect: func() (*MasterLink, error) { return link, nil }}
	plan, err := b.Plan(nil, ordered.FromPairs("master", "10.0.0.1"))(context.Background(), keyHost(""))
	if err != nil || !plan.Done || plan.Retcode != 1 || plan.Out != "highstate" {
		t.Fatalf("%v %+v", err, plan)
	}
	s := plan.Return.(*ordered.Map).Value("minion_|-master_|-" + sock + "_|-bootstrap")
	if m, _ := s.(*ordered.Map); m == nil || !strings.Contains(m.Value("comment").(string), "is salt-master running") {
		t.Errorf("no clear error without a master: %v", plan.Return)
	}
	if _, err := os.Stat(filepath.Join(dir, "pki", "minions", "web1")); err == nil {
		t.Error("a key was accepted though the bootstrap could not run")
	}
}

func TestWaitSignIn(t *testing.T) {
	ctx := context.Background()
	// ping answers with jids 1, 2, …; events carries what the master fires.
	setup := func() (func(context.Context) (string, error), chan Event, *int) {
		n := 0
		events := make(chan Event, 10)
		return func(context.Context) (string, error) {
			n++
			return fmt.Sprint(n), nil
		}, events, &n
	}

	ping, events, n := setup()
	events <- Event{Tag: "salt/job/1/ret/web1"} // before the start: not an answer to this run
	events <- Event{Tag: "salt/minion/web10/start"}
	events <- Event{Tag: "salt/minion/web1/start"}
	events <- Event{Tag: "salt/job/1/ret/web1"}
	if s := waitSignIn(ctx, ping, events, "web1", true, time.Minute); !s.result || *n != 1 {
		t.Errorf("start then ping: %+v after %d pings", s, *n)
	}

	// A running minion that misses the first ping answers the second.
	ping, events, n = setup()
	go func() {
		time.Sleep(pingEvery + pingEvery/2)
		events <- Event{Tag: "salt/job/2/ret/web1"}
	}()
	if s := waitSignIn(ctx, ping, events, "web1", false, time.Minute); !s.result || *n != 2 {
		t.Errorf("second ping: %+v after %d pings", s, *n)
	}

	ping, _, _ = setup()
	if s := waitSignIn(ctx, ping, make(chan Event), "web1", true, 50*time.Millisecond); s.result ||
		!strings.Contains(s.comment, "did not sign in to the master within 50ms (timed out)") {
		t.Errorf("timeout: %+v", s)
	}
	closed := make(chan Event)
	close(closed)
	if s := waitSignIn(ctx, ping, closed, "web1", true, time.Minute); s.result || !strings.Contains(s.comment, "event stream ended") {
		t.Errorf("closed stream: %+v", s)
	}
	fail := func(context.Context) (string, error) { return "", errors.New("no master") }
	if s := waitSignIn(ctx, fail, make(chan Event), "web1", false, time.Minute); s.result || !strings.Contains(s.comment, "no master") {
		t.Errorf("ping fails: %+v", s)
	}
}

// FuzzMinionConfig: whatever the master address, id and minion_opts, the
// config written reads back with the same master and id and option, or
// is refused.
func FuzzMinionConfig(f *testing.F) {
	f.Add("10.0.0.1", "web1", "recon_max", "500")
	f.Add("salt\nid: evil", "a: b", "master", "x")
	f.Add("'quoted'", "yes", "grains", "{role: web}")
	f.Fuzz(func(t *testing.T, addr, id, key, value string) {
		if addr == "" {
			return
		}
		a, err := parseBootstrapArgs(nil, ordered.FromPairs("master", addr,
			"minion_opts", ordered.FromPairs(key, saltyaml.ParseCLIArg(value))), &MasterLink{RetPort: 4506, PublishPort: 4505})
		if err != nil {
			return
		}
		conf, err := a.minionConfig(id)
		if err != nil {
			return
		}
		v, err := saltyaml.Load([]byte(conf), "minion")
		if err != nil {
			t.Fatalf("config does not load: %v\n%s", err, conf)
		}
		m, ok := v.(*ordered.Map)
		if !ok || m.Value("master") != addr || m.Value("id") != id {
			t.Fatalf("master %q id %q read back as %v\n%s", addr, id, v, conf)
		}
	})
}
