package wrapper

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/brinesalt/brine/internal/crypt"
	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/saltyaml"
	"github.com/brinesalt/brine/sshexec"
	"github.com/brinesalt/brine/state/modules"
)

// BootstrapFun is the wrapper function that promotes salt-ssh hosts to
// minions of the local master.
const BootstrapFun = "minion.bootstrap"

// Bootstrap is minion.bootstrap: the controller's half of Salt's
// pre-seed procedure (docs/topics/tutorials/preseed_key.rst). For each
// host it settles the minion key pair — the host's own when it has one,
// else a new pair made here — and accepts the public key in the master's
// pki_dir (minions/<id>); it then has the host install the thin binary
// as salt-minion with /etc/salt/minion, the keys, the pinned
// minion_master.pub and an init script or systemd unit
// (thin/promote), and waits on the master's event bus until the minion
// has signed in. With repo=<url> (a Brine package repository, `make
// repo`) the host installs the salt-minion package from it instead, and
// runs the package's own service. The private key travels only inside the job on the SSH
// session's stdin.
type Bootstrap struct {
	// Connect returns the local master the hosts will join; cmd/salt-ssh
	// wires it to the master package, which this one does not import.
	Connect func() (*MasterLink, error)
	Log     *slog.Logger
}

// MasterLink is what promotion needs of the local master: where its keys
// live and how big new ones are, the ports minions connect to, its local
// socket, its event bus and a way to ping one minion.
type MasterLink struct {
	PKIDir               string
	KeySize              int
	RetPort, PublishPort int
	Socket               string // the local socket, named in errors
	// Events subscribes to the master's event bus until ctx ends.
	Events func(ctx context.Context) (<-chan Event, error)
	// Ping publishes test.ping to minion id alone and returns the jid.
	Ping func(ctx context.Context, id string) (string, error)
}

// Event is one event of the master's bus.
type Event struct {
	Tag  string
	Data *ordered.Map
}

// bootstrapArgs are minion.bootstrap's keyword arguments.
type bootstrapArgs struct {
	master      string        // master=, the address minions connect to
	id          string        // id=, default the roster id
	timeout     time.Duration // timeout= seconds to wait for the sign-in (60)
	force       bool          // force=True replaces a different accepted key
	init        string        // init=auto|systemd|sysv
	bin         string        // bin=, where salt-minion goes
	repo        string        // repo=, a Brine package repository to install salt-minion from
	minionOpts  *ordered.Map  // minion_opts=, more lines for /etc/salt/minion
	retPort     int
	publishPort int
}

func parseBootstrapArgs(args []any, kw *ordered.Map, o *MasterLink) (bootstrapArgs, error) {
	a := bootstrapArgs{timeout: 60 * time.Second, retPort: o.RetPort, publishPort: o.PublishPort}
	if len(args) > 0 {
		return a, fmt.Errorf("%s takes keyword arguments only (master=<address>)", BootstrapFun)
	}
	a.master, _ = kw.Value("master").(string)
	if a.master == "" {
		return a, fmt.Errorf("%s: master=<address> is required", BootstrapFun)
	}
	a.id, _ = kw.Value("id").(string)
	a.init, _ = kw.Value("init").(string)
	a.bin, _ = kw.Value("bin").(string)
	a.repo, _ = kw.Value("repo").(string)
	if a.repo != "" && a.bin != "" {
		return a, fmt.Errorf("%s: bin= and repo= exclude each other (the package installs /usr/bin/salt-minion)", BootstrapFun)
	}
	a.force = modules.Truthy(kw.Value("force"))
	if v := kw.Value("timeout"); v != nil {
		n, ok := v.(int)
		if !ok || n <= 0 {
			return a, fmt.Errorf("%s: timeout=%v: want a positive number of seconds", BootstrapFun, v)
		}
		a.timeout = time.Duration(n) * time.Second
	}
	if v := kw.Value("minion_opts"); v != nil {
		m, ok := v.(*ordered.Map)
		if !ok {
			return a, fmt.Errorf("%s: minion_opts must be a mapping", BootstrapFun)
		}
		a.minionOpts = m
	}
	return a, nil
}

// minionConfig is /etc/salt/minion: the master, the id, the master's
// ports when not Salt's defaults, then minion_opts in their order, dumped
// as Salt dumps YAML so any value reads back as given.
func (a bootstrapArgs) minionConfig(id string) (string, error) {
	for _, v := range [][2]string{{"master", a.master}, {"id", id}} {
		if !printable(v[1]) {
			return "", fmt.Errorf("%s %q: not printable UTF-8 text", v[0], v[1])
		}
	}
	conf := ordered.FromPairs("master", a.master, "id", id)
	if a.retPort != 4506 {
		conf.Set("master_port", a.retPort)
	}
	if a.publishPort != 4505 {
		conf.Set("publish_port", a.publishPort)
	}
	if a.minionOpts != nil {
		a.minionOpts.Range(func(k, v any) bool {
			if key := ordered.KeyString(k); key != "master" && key != "id" {
				conf.Set(key, v)
			}
			return true
		})
	}
	body, err := saltyaml.Dump(conf, saltyaml.DumpOptions{})
	if err != nil {
		return "", fmt.Errorf("minion config: %w", err)
	}
	return "# Written by salt-ssh minion.bootstrap (Brine); a re-run rewrites it.\n" + body, nil
}

// printable reports whether s is valid UTF-8 without control characters,
// so it reads back from YAML as written.
func printable(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsFunc(s, unicode.IsControl)
}

// Plan returns the executor's planner for one minion.bootstrap call.
func (b *Bootstrap) Plan(args []any, kwargs *ordered.Map) func(context.Context, *sshexec.Host) (*sshexec.Plan, error) {
	return func(ctx context.Context, h *sshexec.Host) (*sshexec.Plan, error) {
		res := &bootstrapResult{}
		b.run(ctx, h, args, kwargs, res)
		rc := 0
		if res.failed {
			rc = 1
		}
		return &sshexec.Plan{Done: true, Return: res.steps, Retcode: rc, Out: "highstate"}, nil
	}
}

func (b *Bootstrap) run(ctx context.Context, h *sshexec.Host, args []any, kwargs *ordered.Map, res *bootstrapResult) {
	log := b.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With(logattr.Host, h.Target.ID)
	o, err := b.Connect()
	if err != nil {
		res.fail("arguments", BootstrapFun, err)
		return
	}
	a, err := parseBootstrapArgs(args, kwargs, o)
	if err != nil {
		res.fail("arguments", BootstrapFun, err)
		return
	}
	id := a.id
	if id == "" {
		id = h.Target.ID
	}
	// Subscribe before anything starts the minion, so its sign-in cannot
	// be missed.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events, err := o.Events(ctx)
	if err != nil {
		res.fail("master", o.Socket, err)
		return
	}
	keys, err := b.settleKey(ctx, h, o, id, a.force)
	if err != nil {
		res.fail("accepted key", keys.acceptedPath, err)
		return
	}
	res.add(keys.step())
	restarted, ok := b.install(ctx, h, a, id, keys, res)
	if !ok {
		if keys.created {
			// Nothing on the host uses the key: take the acceptance back.
			os.Remove(keys.acceptedPath)
		}
		return
	}
	log.Debug("minion installed", "restarted", restarted)
	start := time.Now()
	ping := func(ctx context.Context) (string, error) { return o.Ping(ctx, id) }
	s := waitSignIn(ctx, ping, events, id, restarted, a.timeout)
	log.Debug("sign-in checked", "result", s.result, logattr.Elapsed, time.Since(start))
	res.add(s)
}

// install runs minion_bootstrap.install on the host and adds its steps;
// restarted reports that the minion was (re)started.
func (b *Bootstrap) install(ctx context.Context, h *sshexec.Host, a bootstrapArgs, id string, k keyPlan, res *bootstrapResult) (restarted, ok bool) {
	conf, err := a.minionConfig(id)
	if err != nil {
		res.fail("config", "/etc/salt/minion", err)
		return false, false
	}
	kw := ordered.FromPairs("config", conf, "pub", k.pub, "master_pub", k.masterPub)
	if k.pem != "" {
		kw.Set("pem", k.pem)
	}
	if a.init != "" {
		kw.Set("init", a.init)
	}
	if a.bin != "" {
		kw.Set("bin", a.bin)
	}
	if a.repo != "" {
		kw.Set("repo", a.repo)
	}
	ret, rc, err := h.Call(ctx, "minion_bootstrap.install", nil, kw)
	if err != nil || rc != 0 {
		if err == nil {
			err = fmt.Errorf("%v", ret)
		}
		res.fail("install", h.Target.ID, fmt.Errorf("install the minion on %s: %w", h.Target.ID, err))
		return false, false
	}
	steps, _ := ret.([]any)
	if len(steps) == 0 {
		res.fail("install", h.Target.ID, fmt.Errorf("install the minion on %s: unexpected answer %v", h.Target.ID, ret))
		return false, false
	}
	ok = true
	for _, s := range steps {
		m, _ := s.(*ordered.Map)
		st := stepFromMap(m)
		if st.ID == "running" && st.changes != nil && st.changes.Len() > 0 {
			restarted = true
		}
		ok = ok && st.result
		res.add(st)
	}
	return restarted, ok
}

// waitSignIn waits until the minion answers. After a (re)start it waits
// first for salt/minion/<id>/start (the minion has authenticated); then,
// as for a minion that was running already, for its answer to a
// test.ping published to it alone, asked again every second: the start
// event can come before the minion's subscription is up, and a minion
// still waiting for acceptance misses what is published before. So once
// the step succeeds, `salt <id> test.ping` answers.
func waitSignIn(ctx context.Context, ping func(context.Context) (string, error), events <-chan Event, id string, restarted bool, timeout time.Duration) step {
	s := step{ID: "authenticated", Name: id}
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, errors.New("timed out"))
	defer cancel()
	jids := map[string]bool{}
	tick := time.NewTicker(pingEvery)
	defer tick.Stop()
	signedIn := !restarted
	var err error
	send := func() {
		var jid string
		if jid, err = ping(ctx); err == nil {
			jids[jid] = true
		}
	}
	if signedIn {
		send()
	}
	for err == nil {
		select {
		case e, more := <-events:
			switch {
			case !more:
				s.comment = "the master's event stream ended before " + id + " answered"
				return s
			case !signedIn && e.Tag == "salt/minion/"+id+"/start":
				signedIn = true
				send()
			case signedIn && isPingReturn(e.Tag, id, jids):
				s.result, s.comment = true, "minion "+id+" has authenticated to the master and answers test.ping"
				return s
			}
		case <-tick.C:
			if signedIn {
				send()
			}
		case <-ctx.Done():
			what := "did not sign in to the master"
			if signedIn {
				what = "signed in but did not answer test.ping"
			}
			s.comment = fmt.Sprintf("minion %s %s within %s (%s); see %s on the host",
				id, what, timeout, context.Cause(ctx).Error(), "/var/log/salt/minion")
			return s
		}
	}
	s.comment = fmt.Sprintf("ask %s for test.ping: %s", id, err.Error())
	return s
}

// pingEvery is how often the minion is asked again.
const pingEvery = time.Second

// isPingReturn reports whether tag is salt/job/<jid>/ret/<id> for one of
// the pings sent.
func isPingReturn(tag, id string, jids map[string]bool) bool {
	rest, ok := strings.CutPrefix(tag, "salt/job/")
	if !ok {
		return false
	}
	jid, ok := strings.CutSuffix(rest, "/ret/"+id)
	return ok && jids[jid]
}

// readKey reads a PEM key file; a missing file is "".
func readKey(path string) (string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	return crypt.CleanKey(string(b)), nil
}
