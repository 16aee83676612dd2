package user

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/testsupport/pkgtest"
)

// TestSetShadowEntry: the user's lines get the hash and lstchg, cut or
// padded to nine fields as Salt does; every other byte stays.
func TestSetShadowEntry(t *testing.T) {
	const others = "root:*:19000:0:99999:7:::\n# comment\r\n\nbob:$6$b:19000::::::extra \n"
	tests := []struct {
		name, in, want string
		found          bool
	}{
		{"middle", others + "alice:!:19000:0:99999:7:::\n" + others,
			others + "alice:HASH:20000:0:99999:7:::\n" + others, true},
		{"malformed, padded", "alice:old\n" + others, "alice:HASH:20000::::::\n" + others, true},
		{"extra fields cut, spaces trimmed", "  alice:old:1:2:3:4:5:6:7:8:9  \n", "alice:HASH:20000:2:3:4:5:6:7\n", true},
		{"last line without newline", others + "alice:old:1:::::::", others + "alice:HASH:20000::::::\n", true},
		{"every line of the user", "alice:a:1:::::::\nalice:b:2:::::::\n", "alice:HASH:20000::::::\nalice:HASH:20000::::::\n", true},
		{"a prefix is another user", "alice2:x:1:::::::\n", "alice2:x:1:::::::\nalice:HASH:20000::::::\n", false},
		{"absent, appended", others, others + "alice:HASH:20000::::::\n", false},
		{"absent, no final newline", "root:*:1:::::::", "root:*:1:::::::\nalice:HASH:20000::::::\n", false},
		{"empty file", "", "alice:HASH:20000::::::\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, found := setShadowEntry([]byte(tt.in), "alice", "HASH", "20000")
			if diff := cmp.Diff(tt.want, string(got)); diff != "" || found != tt.found {
				t.Errorf("found %v, want %v; content (-want +got):\n%s", found, tt.found, diff)
			}
		})
	}
}

func FuzzSetShadowEntry(f *testing.F) {
	f.Add("root:*:19000:0:99999:7:::\nalice:!:1:::::::\n", "alice")
	f.Add("alice", "alice")
	f.Fuzz(func(t *testing.T, in, name string) {
		if name == "" || strings.ContainsAny(name, ":\n") || strings.TrimSpace(name) != name {
			return
		}
		out, found := setShadowEntry([]byte(in), name, "HASH", "20000")
		if !found && !strings.HasPrefix(string(out), in) {
			t.Fatalf("an append changed the file: %q -> %q", in, out)
		}
		e := parseShadowBytes(out, name)
		if e != "HASH" {
			t.Fatalf("entry of %q after the edit: %q (from %q)", name, e, out)
		}
	})
}

// parseShadowBytes returns the hash parseShadow finds for name in data.
func parseShadowBytes(data []byte, name string) string {
	dir, _ := os.MkdirTemp("", "shadow")
	defer os.RemoveAll(dir)
	p := filepath.Join(dir, "shadow")
	os.WriteFile(p, data, 0o600)
	return str(parseShadow(p, name).Value("passwd"))
}

// shadowRoot is a temporary root whose etc/shadow has the given mode and,
// when running as root, group 42 (Debian's shadow group).
func shadowRoot(t *testing.T, mode os.FileMode) (root, shadow string) {
	root = pkgtest.Accounts(t, passwdFile, groupFile, shadowFile)
	shadow = filepath.Join(root, "etc/shadow")
	if err := os.Chmod(shadow, mode); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		if err := os.Chown(shadow, 0, 42); err != nil {
			t.Fatal(err)
		}
	}
	return root, shadow
}

var day20000 = func() time.Time { return time.Date(2024, 10, 4, 23, 30, 0, 0, time.Local) } // day 20000

// TestSetPasswordWritesShadow: by default shadow.set_password edits the
// shadow file itself, as Salt does (nothing in any argv but `id`): the
// new file replaces the old one with its mode and owner, the other lines
// untouched, no temporary file left, under shadow-utils' lock file.
func TestSetPasswordWritesShadow(t *testing.T) {
	root, shadow := shadowRoot(t, 0o640)
	before, _ := os.Stat(shadow)
	f := &pkgtest.Fake{}
	env := newEnv(&Module{Run: f.Run, Which: sbin, Root: root, Now: day20000})
	got, err := env.Run(context.Background(), "shadow.set_password", []any{"alice", "$6$new$hash"}, nil)
	if err != nil || got != true {
		t.Fatalf("set_password = %v, %v", got, err)
	}
	if diff := cmp.Diff([]string{"id alice"}, f.Lines()); diff != "" {
		t.Errorf("commands (-want +got):\n%s", diff)
	}
	data, _ := os.ReadFile(shadow)
	if want := "root:*:19000:0:99999:7:::\nalice:$6$new$hash:20000:0:99999:7:::\n"; string(data) != want {
		t.Errorf("shadow =\n%s\nwant\n%s", data, want)
	}
	after, _ := os.Stat(shadow)
	b, a := before.Sys().(*syscall.Stat_t), after.Sys().(*syscall.Stat_t)
	if after.Mode() != before.Mode() || a.Uid != b.Uid || a.Gid != b.Gid {
		t.Errorf("mode/owner %v %d:%d, want %v %d:%d", after.Mode(), a.Uid, a.Gid, before.Mode(), b.Uid, b.Gid)
	}
	if a.Ino == b.Ino {
		t.Error("the shadow file was rewritten in place, not replaced")
	}
	entries, _ := os.ReadDir(filepath.Join(root, "etc"))
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if diff := cmp.Diff([]string{".pwd.lock", "group", "passwd", "shadow"}, names); diff != "" {
		t.Errorf("files in etc (-want +got):\n%s", diff)
	}
}

// TestSetPasswordCases: use_usermod (and root) as Salt runs usermod, a
// missing user, a missing shadow file, an absent entry, ALT's tcb file.
func TestSetPasswordCases(t *testing.T) {
	tests := []struct {
		name     string
		kw       []any
		grainsOS string
		setup    func(t *testing.T, root string, f *pkgtest.Fake)
		want     any
		commands []string // ROOT is the temporary root
		file     string   // the shadow file's path under root and content afterwards
		content  string
	}{
		{name: "use_usermod", kw: []any{"use_usermod", true}, want: false,
			commands: []string{"id alice", "usermod -p $6$x$y alice"}, file: "etc/shadow", content: shadowFile},
		{name: "use_usermod string", kw: []any{"use_usermod", "True"}, want: false,
			commands: []string{"id alice", "usermod -p $6$x$y alice"}, file: "etc/shadow", content: shadowFile},
		{name: "use_usermod with root", kw: []any{"use_usermod", 1, "root", "ROOT"}, want: false,
			commands: []string{"id alice", "usermod -R ROOT -p $6$x$y alice"}, file: "etc/shadow", content: shadowFile},
		{name: "root", kw: []any{"root", "ROOT"}, want: true, commands: []string{"id alice"},
			file: "etc/shadow", content: "root:*:19000:0:99999:7:::\nalice:$6$x$y:20000:0:99999:7:::\n"},
		{name: "no such user", setup: func(_ *testing.T, _ string, f *pkgtest.Fake) { f.On("id alice", 1, "") },
			want: false, commands: []string{"id alice"}, file: "etc/shadow", content: shadowFile},
		{name: "no shadow file", setup: func(t *testing.T, root string, _ *pkgtest.Fake) { os.Remove(filepath.Join(root, "etc/shadow")) },
			want: ordered.New(), commands: []string{"id alice"}},
		{name: "entry added", setup: func(t *testing.T, root string, _ *pkgtest.Fake) {
			os.WriteFile(filepath.Join(root, "etc/shadow"), []byte("root:*:19000:0:99999:7:::\n"), 0o640)
		}, want: true, commands: []string{"id alice"},
			file: "etc/shadow", content: "root:*:19000:0:99999:7:::\nalice:$6$x$y:20000::::::\n"},
		{name: "ALT tcb", grainsOS: "ALT", setup: func(t *testing.T, root string, _ *pkgtest.Fake) {
			os.MkdirAll(filepath.Join(root, "etc/tcb/alice"), 0o710)
			os.WriteFile(filepath.Join(root, "etc/tcb/alice/shadow"), []byte("alice:!:1:::::::\n"), 0o600)
		}, want: true, commands: []string{"id alice"}, file: "etc/tcb/alice/shadow", content: "alice:$6$x$y:20000::::::\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, _ := shadowRoot(t, 0o640)
			f := &pkgtest.Fake{}
			if tt.setup != nil {
				tt.setup(t, root, f)
			}
			env := newEnv(&Module{Run: f.Run, Which: sbin, Root: root, Now: day20000})
			if tt.grainsOS != "" {
				env = env.WithGrains(ordered.FromPairs("kernel", "Linux", "os", tt.grainsOS))
			}
			kw := append([]any(nil), tt.kw...)
			for i, v := range kw {
				if v == "ROOT" {
					kw[i] = root
				}
			}
			got, err := env.Run(context.Background(), "shadow.set_password", []any{"alice", "$6$x$y"}, ordered.FromPairs(kw...))
			if err != nil || !cmp.Equal(got, tt.want, cmp.Comparer(func(a, b *ordered.Map) bool { return a.Len() == b.Len() })) {
				t.Errorf("got %v %v, want %v", got, err, tt.want)
			}
			var cmds []string
			for _, l := range f.Lines() {
				cmds = append(cmds, strings.ReplaceAll(l, root, "ROOT"))
			}
			if diff := cmp.Diff(tt.commands, cmds); diff != "" {
				t.Errorf("commands (-want +got):\n%s", diff)
			}
			if tt.file != "" {
				if data, _ := os.ReadFile(filepath.Join(root, tt.file)); string(data) != tt.content {
					t.Errorf("%s =\n%s\nwant\n%s", tt.file, data, tt.content)
				}
			}
		})
	}
}

// TestSetPasswordWaitsForTheLock: while another holder has lckpwdf's lock
// the shadow file is not touched; the call gives up with its context.
func TestSetPasswordWaitsForTheLock(t *testing.T) {
	root, shadow := shadowRoot(t, 0o640)
	lock, err := os.OpenFile(filepath.Join(root, "etc/.pwd.lock"), os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	// An open file description lock conflicts with the process-owned
	// lock lckpwdf takes, even within this process.
	lk := unix.Flock_t{Type: unix.F_WRLCK}
	if err := unix.FcntlFlock(lock.Fd(), unix.F_OFD_SETLK, &lk); err != nil {
		t.Fatal(err)
	}
	env := newEnv(&Module{Run: (&pkgtest.Fake{}).Run, Which: sbin, Root: root, Now: day20000})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got, err := env.Run(ctx, "shadow.set_password", []any{"alice", "$6$x$y"}, nil); err == nil || !strings.Contains(err.Error(), "held by another process") {
		t.Errorf("with the lock held: %v, %v", got, err)
	}
	if data, _ := os.ReadFile(shadow); string(data) != shadowFile {
		t.Errorf("shadow changed under another's lock:\n%s", data)
	}
	lk.Type = unix.F_UNLCK
	if err := unix.FcntlFlock(lock.Fd(), unix.F_OFD_SETLK, &lk); err != nil {
		t.Fatal(err)
	}
	if got, err := env.Run(context.Background(), "shadow.set_password", []any{"alice", "$6$x$y"}, nil); got != true || err != nil {
		t.Errorf("after the lock was released: %v, %v", got, err)
	}
}

func TestLastChange(t *testing.T) {
	for _, tt := range []struct {
		t    time.Time
		want string
	}{
		{time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC), "0"},
		{time.Date(2024, 10, 4, 0, 0, 1, 0, time.FixedZone("x", 14*3600)), "20000"}, // still the 3rd in UTC
		{time.Date(2024, 10, 4, 23, 59, 0, 0, time.FixedZone("y", -12*3600)), "20000"},
	} {
		if got := lastChange(tt.t); got != tt.want {
			t.Errorf("lastChange(%v) = %s, want %s", tt.t, got, tt.want)
		}
	}
}
