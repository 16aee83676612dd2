package minion_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/config"
	"github.com/brinesalt/brine/internal/crypt"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/master"
	"github.com/brinesalt/brine/minion"
	"github.com/brinesalt/brine/thin/frame"
)

// mmaster is one master of a multi-master test, restartable on the same
// ports and directories.
type mmaster struct {
	t  *testing.T
	o  master.Options
	m  *master.Master
	mu sync.Mutex
}

func newMMaster(t *testing.T, ctx context.Context, dir, pkiDir string, edit func(*master.Options)) *mmaster {
	t.Helper()
	o := master.DefaultOptions()
	o.Interface, o.PublishPort, o.RetPort = "127.0.0.1", port(t), port(t)
	o.PKIDir, o.CacheDir, o.SockDir = pkiDir, dir+"/cache", dir+"/sock"
	o.FileRoots, o.PillarRoots = map[string][]string{"base": {dir + "/srv"}}, map[string][]string{"base": {dir + "/pillar"}}
	o.Auth.AutoAccept = true
	if edit != nil {
		edit(&o)
	}
	mm := &mmaster{t: t, o: o}
	mm.start(ctx)
	t.Cleanup(mm.stop)
	return mm
}

func (mm *mmaster) start(ctx context.Context) {
	mm.t.Helper()
	m, err := master.New(mm.o, slog.New(slog.DiscardHandler))
	if err != nil {
		mm.t.Fatal(err)
	}
	if err := m.Start(ctx); err != nil {
		mm.t.Fatal(err)
	}
	mm.mu.Lock()
	mm.m = m
	mm.mu.Unlock()
}

func (mm *mmaster) stop() {
	mm.mu.Lock()
	m := mm.m
	mm.m = nil
	mm.mu.Unlock()
	if m != nil {
		m.Stop()
	}
}

// addr is the master's entry in a minion's master list, host:ret_port.
func (mm *mmaster) addr() string { return "127.0.0.1:" + strconv.Itoa(mm.o.RetPort) }

func (mm *mmaster) waitSubscribers(t *testing.T, ctx context.Context, n int) {
	t.Helper()
	for mm.m.Subscribers() < n {
		if ctx.Err() != nil {
			t.Fatalf("master %s: %d subscribers, want %d", mm.addr(), mm.m.Subscribers(), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ping runs test.ping on the master and returns the ids that answered.
func (mm *mmaster) ping(ctx context.Context, timeout time.Duration) map[string]*ordered.Map {
	got, _, err := mm.m.Gather(ctx, master.PublishRequest{Tgt: "*", Fun: "test.ping"}, timeout)
	if err != nil {
		return nil
	}
	return got
}

// shareMasterKey copies master.pem/master.pub from one pki dir to
// another, as the multimaster tutorial has the second master set up.
func shareMasterKey(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(to, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"master.pem", "master.pub"} {
		b, err := os.ReadFile(filepath.Join(from, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, f), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// blocker is an executor whose "test.block" jobs wait for release;
// everything else returns True.
type blocker struct {
	started chan string
	release chan struct{}
}

func newBlocker() *blocker {
	return &blocker{started: make(chan string, 16), release: make(chan struct{})}
}

func (b *blocker) exec(ctx context.Context, j *frame.Job) *frame.Result {
	if j.Fun == "test.block" {
		b.started <- j.JID
		select {
		case <-b.release:
		case <-ctx.Done():
		}
		return &frame.Result{Return: "released"}
	}
	return &frame.Result{Return: true}
}

func mmMinionConfig(dir, id string, masters ...string) *config.Minion {
	c := config.DefaultMinion(filepath.Join(dir, "etc-"+id))
	c.ID, c.Masters = id, masters
	c.PKIDir, c.CacheDir = filepath.Join(dir, "pki-"+id), filepath.Join(dir, "cache-"+id)
	c.AcceptanceWaitTime, c.AuthTimeout = 200*time.Millisecond, 2*time.Second
	c.ReturnRetryTimer, c.ReturnRetryTimerMax = 200*time.Millisecond, 0
	c.ReconDefault, c.ReconMax = 100*time.Millisecond, 200*time.Millisecond
	return c
}

func runAsync(t *testing.T, ctx context.Context, run func(context.Context) error) {
	t.Helper()
	rctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := run(rctx); err != nil {
			t.Errorf("minion: %v", err)
		}
	}()
	t.Cleanup(func() { stop(); <-done })
}

func lookupJID(t *testing.T, ctx context.Context, mm *mmaster, jid string) *ordered.Map {
	t.Helper()
	v, err := mm.m.Runner(ctx, "jobs.lookup_jid", []any{jid}, ordered.New())
	if err != nil {
		t.Fatalf("lookup_jid %s: %v", jid, err)
	}
	m, _ := v.(*ordered.Map)
	if m == nil {
		m = ordered.New()
	}
	return m
}

// TestHotMultiMaster is hot multi-master with two masters on one IP:
// the minion answers both; a master killed in the middle of a job
// changes nothing for the other, and gets the return the minion made
// while it was down once it is back; neither master sees the other's
// returns.
func TestHotMultiMaster(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	a := newMMaster(t, ctx, dir+"/a", dir+"/a/pki", nil)
	shareMasterKey(t, dir+"/a/pki", dir+"/b/pki")
	b := newMMaster(t, ctx, dir+"/b", dir+"/b/pki", nil)
	bl := newBlocker()
	c := mmMinionConfig(dir, "hot1", a.addr(), b.addr())
	if !minion.IsHot(c) {
		t.Fatal("a list with master_type str is not hot")
	}
	h, err := minion.NewHot(minion.Options{Config: c, Execute: bl.exec, Grains: func(context.Context) (*ordered.Map, error) { return ordered.New(), nil }})
	if err != nil {
		t.Fatal(err)
	}
	runAsync(t, ctx, h.Run)
	a.waitSubscribers(t, ctx, 1)
	b.waitSubscribers(t, ctx, 1)
	for _, mm := range []*mmaster{a, b} {
		if got := mm.ping(ctx, 10*time.Second); got["hot1"] == nil {
			t.Fatalf("master %s: no answer from hot1", mm.addr())
		}
	}

	jid, _, err := a.m.Publish(ctx, master.PublishRequest{Tgt: "hot1", Fun: "test.block"})
	if err != nil {
		t.Fatal(err)
	}
	<-bl.started
	a.stop() // master A dies with the job running
	if got := b.ping(ctx, 10*time.Second); got["hot1"] == nil {
		t.Fatal("master B lost its minion when A went down")
	}
	close(bl.release)
	ma := h.Minions()[0]
	for ma.Pending() == 0 && ctx.Err() == nil {
		time.Sleep(20 * time.Millisecond)
	}
	a.start(ctx)
	for lookupJID(t, ctx, a, jid).Value("hot1") == nil {
		if ctx.Err() != nil {
			t.Fatal("the return made while master A was down never reached it")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if got := lookupJID(t, ctx, a, jid).Value("hot1"); got != "released" {
		t.Fatalf("return on A = %v", got)
	}
	if got := lookupJID(t, ctx, b, jid); got.Len() != 0 {
		t.Fatalf("master B holds A's job: %v", idsOf(got))
	}
	if h.Minions()[1].Pending() != 0 {
		t.Fatal("B's minion has returns queued")
	}
}

// TestFailover is master_type failover with host:port entries: the
// minion serves one master; when it dies the minion moves to the next
// within master_alive_interval plus one sign-in, and with
// master_failback goes back to the first once it answers.
func TestFailover(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	a := newMMaster(t, ctx, dir+"/a", dir+"/a/pki", nil)
	shareMasterKey(t, dir+"/a/pki", dir+"/b/pki")
	b := newMMaster(t, ctx, dir+"/b", dir+"/b/pki", nil)
	c := mmMinionConfig(dir, "fo1", a.addr(), b.addr())
	c.MasterType, c.MasterAliveInterval = minion.MasterTypeFailover, time.Second
	c.MasterFailback, c.MasterFailbackInterval = true, time.Second
	mn, err := minion.New(minion.Options{Config: c, Execute: newBlocker().exec, Grains: func(context.Context) (*ordered.Map, error) { return ordered.New(), nil }})
	if err != nil {
		t.Fatal(err)
	}
	runAsync(t, ctx, mn.Run)
	a.waitSubscribers(t, ctx, 1)
	if b.m.Subscribers() != 0 {
		t.Fatal("a failover minion subscribed to both masters")
	}
	if got := a.ping(ctx, 10*time.Second); got["fo1"] == nil {
		t.Fatal("no answer on the first master")
	}
	start := time.Now()
	a.stop()
	for b.ping(ctx, 500*time.Millisecond)["fo1"] == nil {
		if ctx.Err() != nil {
			t.Fatal("the minion never answered the second master")
		}
	}
	t.Logf("failover: first answer on the second master %s after the first stopped (master_alive_interval 1s)", time.Since(start).Round(10*time.Millisecond))

	a.start(ctx)
	start = time.Now()
	for a.ping(ctx, 500*time.Millisecond)["fo1"] == nil {
		if ctx.Err() != nil {
			t.Fatal("the minion never failed back to the first master")
		}
	}
	t.Logf("failback: first answer on the first master %s after it restarted (master_failback_interval 1s)", time.Since(start).Round(10*time.Millisecond))
	for b.m.Subscribers() != 0 && ctx.Err() == nil {
		time.Sleep(20 * time.Millisecond)
	}
	if b.m.Subscribers() != 0 {
		t.Fatal("still subscribed to the second master after failback")
	}
}

// TestMasterTypeRefused: master_type func (and unknown types) are
// refused with a clear error rather than run as something else.
func TestMasterTypeRefused(t *testing.T) {
	for _, typ := range []string{"func", "disable", "bogus"} {
		c := mmMinionConfig(t.TempDir(), "x", "m1", "m2")
		c.MasterType = typ
		if _, err := minion.New(minion.Options{Config: c}); !errors.Is(err, minion.ErrMasterType) {
			t.Errorf("master_type %s: err = %v", typ, err)
		}
	}
}

// TestMultiMasterPKI is multimaster_pki.rst: two masters with their own
// keys and one signing key; a minion with verify_master_pubkey_sign and
// master_sign.pub signs in to either, replacing the pinned key; without
// the signing key, or with another, it refuses the master.
func TestMultiMasterPKI(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sign := func(o *master.Options) { o.Raw = ordered.FromPairs("master_sign_pubkey", true) }
	a := newMMaster(t, ctx, dir+"/a", dir+"/a/pki", sign)
	// B has its own master key but A's signing key, and sends the
	// precomputed signature salt-key --gen-signature makes.
	if err := os.MkdirAll(dir+"/b/pki", 0o700); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"master_sign.pem", "master_sign.pub"} {
		data, err := os.ReadFile(filepath.Join(dir, "a/pki", f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "b/pki", f), data, 0o600)
	}
	if _, err := crypt.GenKeys(dir+"/b/pki", "master", 2048); err != nil {
		t.Fatal(err)
	}
	if _, err := crypt.GenSignature(dir+"/b/pki/master_sign.pem", dir+"/b/pki/master.pub", dir+"/b/pki/master_pubkey_signature", ""); err != nil {
		t.Fatal(err)
	}
	b := newMMaster(t, ctx, dir+"/b", dir+"/b/pki", func(o *master.Options) {
		o.Raw = ordered.FromPairs("master_sign_pubkey", true, "master_use_pubkey_signature", true)
	})

	connect := func(id string, verify bool, signPub []byte, to *mmaster) error {
		c := mmMinionConfig(dir, id, to.addr())
		c.VerifyMasterPubkeySign = verify
		os.MkdirAll(c.PKIDir, 0o700)
		if signPub != nil {
			os.WriteFile(filepath.Join(c.PKIDir, "master_sign.pub"), signPub, 0o644)
		}
		mn, err := minion.New(minion.Options{Config: c})
		if err != nil {
			return err
		}
		defer mn.Close()
		return mn.Connect(ctx)
	}
	signPub, err := os.ReadFile(dir + "/a/pki/master_sign.pub")
	if err != nil {
		t.Fatal(err)
	}
	for _, to := range []*mmaster{a, b, a} {
		if err := connect("pki1", true, signPub, to); err != nil {
			t.Fatalf("sign in to %s: %v", to.addr(), err)
		}
		pinned, _ := os.ReadFile(filepath.Join(dir, "pki-pki1", "minion_master.pub"))
		mine, _ := os.ReadFile(filepath.Join(to.o.PKIDir, "master.pub"))
		if crypt.CleanKey(string(pinned)) != crypt.CleanKey(string(mine)) {
			t.Fatalf("after %s the pinned key is not that master's", to.addr())
		}
	}
	other, err := crypt.GenerateKey(2048)
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		verify bool
		pub    []byte
	}{
		"no verification": {false, nil},
		"no master_sign":  {true, nil},
		"another signer":  {true, crypt.EncodePublicKey(&other.PublicKey)},
	} {
		if err := connect("bad-"+name[:2], tc.verify, tc.pub, b); !errors.Is(err, minion.ErrMasterSignature) {
			t.Errorf("%s: err = %v, want ErrMasterSignature", name, err)
		}
	}
	// A minion that pinned A without signatures refuses B's other key.
	if err := connect("plain", false, nil, a); err == nil {
		t.Error("a signing master accepted by a minion that does not verify")
	}
}

// TestSharedPKIDir is two masters on one pki_dir (an NFS or synced
// directory): a key accepted through one master is accepted on the
// other at once, and the minion signs in to both.
func TestSharedPKIDir(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	manual := func(o *master.Options) { o.Auth.AutoAccept = false }
	a := newMMaster(t, ctx, dir+"/a", dir+"/pki", manual)
	b := newMMaster(t, ctx, dir+"/b", dir+"/pki", manual)
	c := mmMinionConfig(dir, "shared1", a.addr(), b.addr())
	h, err := minion.NewHot(minion.Options{Config: c, Execute: newBlocker().exec, Grains: func(context.Context) (*ordered.Map, error) { return ordered.New(), nil }})
	if err != nil {
		t.Fatal(err)
	}
	runAsync(t, ctx, h.Run)
	for {
		v, err := b.m.Wheel(ctx, "key.list_all", ordered.New())
		if err != nil {
			t.Fatal(err)
		}
		if m, _ := v.(*ordered.Map); m != nil && len(toStrings(m.Value("minions_pre"))) == 1 {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the key never became pending")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := a.m.Wheel(ctx, "key.accept", ordered.FromPairs("match", "shared1")); err != nil {
		t.Fatal(err)
	}
	if got := b.m.Accepted(); len(got) != 1 || got[0] != "shared1" {
		t.Fatalf("master B's accepted keys right after A accepted: %v", got)
	}
	a.waitSubscribers(t, ctx, 1)
	b.waitSubscribers(t, ctx, 1)
	for _, mm := range []*mmaster{a, b} {
		if got := mm.ping(ctx, 10*time.Second); got["shared1"] == nil {
			t.Fatalf("master %s: no answer", mm.addr())
		}
	}
	if _, err := b.m.Wheel(ctx, "key.delete", ordered.FromPairs("match", "shared1")); err != nil {
		t.Fatal(err)
	}
	if got := a.m.Accepted(); len(got) != 0 {
		t.Fatalf("master A still lists a key B deleted: %v", got)
	}
}

func toStrings(v any) []string {
	l, _ := v.([]any)
	var out []string
	for _, x := range l {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	if s, ok := v.([]string); ok {
		out = s
	}
	return out
}
