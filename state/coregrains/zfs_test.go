package coregrains

import (
	"context"
	"encoding/json"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
)

// fakeZFSHost is a host for zfsGrains: files that exist, commands on
// PATH, and each command's output and exit status by its command line.
type fakeZFSHost struct {
	files, path map[string]bool
	out         map[string]string
	fail        map[string]bool
	ran         []string
}

func (f *fakeZFSHost) host() zfsHost {
	return zfsHost{
		exists: func(p string) bool { return f.files[p] },
		which:  func(n string) bool { return f.path[n] },
		run: func(_ context.Context, name string, args ...string) (string, bool) {
			line := strings.Join(append([]string{name}, args...), " ")
			f.ran = append(f.ran, line)
			return f.out[line], !f.fail[line]
		},
	}
}

const (
	manCmd   = "man -w zpool-features"
	zpoolCmd = "zpool list -H -o name,size"
)

// TestZFSGrains checks salt/grains/zfs.py's logic on synthetic hosts:
// zfs_support needs the kernel module or zfs-fuse and zpool,
// zfs_feature_flags is the man page's presence whatever the support,
// zpool is each pool's size in bytes (sizes truncated as to_size's
// int() does), and a zpool line Salt's split cannot index drops all of
// them.
func TestZFSGrains(t *testing.T) {
	for _, tc := range []struct {
		name string
		host fakeZFSHost
		want map[string]any
		ran  []string
	}{
		{"no zfs, man page missing", fakeZFSHost{path: map[string]bool{"man": true}, fail: map[string]bool{manCmd: true}},
			map[string]any{"zfs_support": false, "zfs_feature_flags": false}, []string{manCmd}},
		{"no zfs, man page there", fakeZFSHost{path: map[string]bool{"man": true}},
			map[string]any{"zfs_support": false, "zfs_feature_flags": true}, []string{manCmd}},
		{"no man", fakeZFSHost{files: map[string]bool{"/sys/module/zfs": true}, path: map[string]bool{"zpool": true}},
			map[string]any{"zfs_support": true, "zfs_feature_flags": false}, []string{zpoolCmd}},
		{"module without zpool", fakeZFSHost{files: map[string]bool{"/sys/module/zfs": true}},
			map[string]any{"zfs_support": false, "zfs_feature_flags": false}, nil},
		{"zpool without module", fakeZFSHost{path: map[string]bool{"zpool": true}},
			map[string]any{"zfs_support": false, "zfs_feature_flags": false}, nil},
		{"pools", fakeZFSHost{files: map[string]bool{"/sys/module/zfs": true}, path: map[string]bool{"zpool": true, "man": true},
			out: map[string]string{zpoolCmd: "tank\t9.50G\nbackup\t1.23T\r\nodd\t-\n"}},
			map[string]any{"zfs_support": true, "zfs_feature_flags": true,
				"zpool": map[string]any{"tank": 10200547328, "backup": 1352399302164, "odd": "-"}}, []string{manCmd, zpoolCmd}},
		{"zfs-fuse, no pools", fakeZFSHost{path: map[string]bool{"zfs-fuse": true, "zpool": true}},
			map[string]any{"zfs_support": true, "zfs_feature_flags": false}, []string{zpoolCmd}},
		{"stderr merged as cmd.run does", fakeZFSHost{files: map[string]bool{"/sys/module/zfs": true}, path: map[string]bool{"zpool": true},
			out: map[string]string{zpoolCmd: "internal error: failed to initialize ZFS library\n"}, fail: map[string]bool{zpoolCmd: true}},
			map[string]any{"zfs_support": true, "zfs_feature_flags": false, "zpool": map[string]any{"internal": "error:"}}, []string{zpoolCmd}},
		{"a blank line makes Salt's grain function raise", fakeZFSHost{files: map[string]bool{"/sys/module/zfs": true}, path: map[string]bool{"zpool": true},
			out: map[string]string{zpoolCmd: "tank\t10G\n\nbackup\t1T\n"}},
			nil, []string{zpoolCmd}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := zfsGrains(context.Background(), tc.host.host())
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("grains (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.ran, tc.host.ran); d != "" {
				t.Errorf("commands (-want +got):\n%s", d)
			}
		})
	}
}

// TestZFSToSizeAgainstSalt compares zfsToSize with
// salt.utils.zfs.to_size(value, False) as Salt 3006 computed it
// (testdata/salt3006_zfs/gen.py).
func TestZFSToSizeAgainstSalt(t *testing.T) {
	b, err := os.ReadFile("testdata/salt3006_zfs/sizes.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Rows [][4]any }
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for _, r := range doc.Rows {
		in, typ, repr := r[0].(string), r[1].(string), r[2].(string)
		var want any
		switch typ {
		case "int":
			want = int(r[3].(float64))
		case "float":
			want = r[3].(float64)
		default:
			want = r[3]
		}
		if got := zfsToSize(in); !cmp.Equal(got, want) {
			t.Errorf("to_size(%q, False) = %#v, Salt says %s (%s)", in, got, repr, typ)
		}
	}
}

// TestZFSGrainsGathered checks that Gather includes the zfs grains (on
// Linux, where core grains are gathered).
func TestZFSGrainsGathered(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("core grains are Linux-only")
	}
	g, err := Gather(context.Background(), GatherOptions{Root: t.TempDir(), Opts: ordered.FromPairs("id", "z"), SkipCustom: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"zfs_support", "zfs_feature_flags"} {
		if _, ok := g.Value(k).(bool); !ok {
			t.Errorf("%s = %#v, want a bool", k, g.Value(k))
		}
	}
}
