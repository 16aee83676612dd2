package testhosts

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// loginUser is the resolved login user of a cluster.
type loginUser struct {
	Name string `json:"name"`
	UID  int    `json:"uid"`
	GID  int    `json:"gid"`
	Home string `json:"home"`
	// Hash is the crypt(3) hash of the cluster's password, written into
	// the hosts' private /etc/shadow.
	Hash string `json:"hash,omitempty"`
}

// Login users of isolated clusters exist only inside the hosts: each host
// sees /etc and /home through its own overlayfs (see overlays), whose upper
// directory holds copies of the machine's passwd, group, shadow and gshadow
// with the user's lines added, and its home. The machine's own account
// files are never written, so the tests change no account on it, clusters
// with different passwords never race, and nothing is left behind.
//
// firstPrivateID is where the search for a free uid and gid starts: above
// Debian's dynamic range (1000–59999) and its reserved 60000–60999.
const firstPrivateID = 61000

// privateUser resolves the login user of an isolated cluster. A user that
// exists on the machine keeps its ids and home (files it owns stay its
// own); a new one gets the first id free in both passwd and group.
func privateUser(ctx context.Context, name, password string) (loginUser, error) {
	hash, err := passwordHash(ctx, password)
	if err != nil {
		return loginUser{}, err
	}
	if u, err := lookupUser(name); err == nil {
		u.Hash = hash
		return u, nil
	}
	passwd, err := os.ReadFile("/etc/passwd")
	if err != nil {
		return loginUser{}, err
	}
	group, err := os.ReadFile("/etc/group")
	if err != nil {
		return loginUser{}, err
	}
	used := map[int]bool{}
	for _, f := range [][]byte{passwd, group} {
		for _, line := range strings.Split(string(f), "\n") {
			if fields := strings.Split(line, ":"); len(fields) > 2 {
				if id, err := strconv.Atoi(fields[2]); err == nil {
					used[id] = true
				}
			}
		}
	}
	for id := firstPrivateID; id < 65534; id++ {
		if !used[id] {
			return loginUser{Name: name, UID: id, GID: id, Home: "/home/" + name, Hash: hash}, nil
		}
	}
	return loginUser{}, errors.New("no free uid for the login user")
}

func lookupUser(name string) (loginUser, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return loginUser{}, fmt.Errorf("look up user %s: %w", name, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return loginUser{Name: u.Username, UID: uid, GID: gid, Home: u.HomeDir}, nil
}

// passwordHash hashes password with SHA-512 crypt. The password goes to
// openssl on stdin, never in argv.
func passwordHash(ctx context.Context, password string) (string, error) {
	if password == DefaultPassword {
		return defaultPasswordHash, nil
	}
	cmd := exec.CommandContext(ctx, "openssl", "passwd", "-6", "-stdin")
	cmd.Stdin = strings.NewReader(password + "\n")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("hash the login password: %w: %s", err, bytes.TrimSpace(stderr.Bytes()))
	}
	return strings.TrimSpace(string(out)), nil
}

// overlay is a machine directory that each host sees through its own
// overlayfs: the host reads the machine's files and writes its own copy.
type overlay struct {
	InHost  string // the directory, in the host and on the machine
	Backing string // name under the host's fs/ directory: upper/ and work/
}

// overlays come before the private bind mounts, which land on top of them.
var overlays = []overlay{{InHost: "/etc", Backing: "ov_etc"}, {InHost: "/home", Backing: "ov_home"}}

// systemDirs are what HostOptions.PrivateSystem overlays besides overlays:
// where dpkg, apt, rpm and maintainer scripts write. /bin, /sbin and the
// /lib directories count only where they are real directories (on a
// merged-/usr system they are links into /usr, which is overlaid).
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
	"/opt", "/var/lib", "/var/cache", "/var/log", "/var/spool", "/var/mail", "/run"}

// hostOverlays returns the overlays of a host with options o.
func hostOverlays(o HostOptions) []overlay {
	if !o.PrivateSystem {
		return overlays
	}
	out := slices.Clone(overlays)
	for _, d := range systemDirs {
		if st, err := os.Lstat(d); err != nil || !st.IsDir() {
			continue
		}
		out = append(out, overlay{InHost: d, Backing: "ov" + strings.ReplaceAll(d, "/", "_")})
	}
	return out
}

// underOverlay reports whether dir is inside one of ovs.
func underOverlay(dir string, ovs []overlay) bool {
	for _, ov := range ovs {
		if dir == ov.InHost || strings.HasPrefix(dir, ov.InHost+"/") {
			return true
		}
	}
	return false
}

// accountFiles are the account databases the hosts' /etc overlay holds,
// with their modes on Debian (owners are copied from the machine's files).
var accountFiles = []struct {
	name string
	mode os.FileMode
	line func(u loginUser) string
}{
	{"passwd", 0o644, func(u loginUser) string {
		return fmt.Sprintf("%s:x:%d:%d:Brine test hosts:%s:/bin/bash", u.Name, u.UID, u.GID, u.Home)
	}},
	{"group", 0o644, func(u loginUser) string { return fmt.Sprintf("%s:x:%d:", u.Name, u.GID) }},
	{"shadow", 0o640, func(u loginUser) string { return u.Name + ":" + u.Hash + ":19000:0:99999:7:::" }},
	{"gshadow", 0o640, func(u loginUser) string { return u.Name + ":!::" }},
}

// writeOverlays creates the upper and work directories of the host's
// overlays in fs, the account files with the login user's lines (any line
// of the machine's for the same name replaced), and the mount points the
// private bind mounts need inside the overlaid directories.
func writeOverlays(fs *os.Root, u loginUser, o HostOptions) error {
	ovs := hostOverlays(o)
	for _, ov := range ovs {
		for _, sub := range []string{"upper", "work"} {
			if err := fs.MkdirAll(filepath.Join(ov.Backing, sub), 0o755); err != nil {
				return err
			}
		}
	}
	if o.PrivateSystem {
		if err := hideMachinePaths(fs, ovs, hiddenInPrivateSystem); err != nil {
			return err
		}
	}
	for _, af := range accountFiles {
		if err := writeAccountFile(fs, "/etc/"+af.name, filepath.Join("ov_etc", "upper", af.name), af.mode, u.Name, af.line(u)); err != nil {
			return err
		}
	}
	for _, pd := range privateDirs(u, o) {
		if pd.File {
			continue
		}
		if err := makeMountPoint(fs, pd.InHost, ovs); err != nil {
			return fmt.Errorf("create mount point %s: %w", pd.InHost, err)
		}
	}
	return nil
}

// hiddenInPrivateSystem are the machine's paths a PrivateSystem host
// must not see through its overlays. /run/systemd: maintainer scripts
// decide between systemctl and SysV scripts by /run/systemd/system, and
// on a machine that runs systemd a host must never reach the machine's
// manager through its sockets there; the host is a SysV host. Salt's own
// directories: a package installs into a host as onto a fresh machine,
// whatever this machine holds there (the mount points plain hosts need,
// or what a Salt run by hand left), since dpkg keeps an existing
// directory's owner and mode.
var hiddenInPrivateSystem = []string{"/run/systemd", "/run/salt", "/var/cache/salt", "/var/log/salt",
	"/var/lib/salt", "/opt/saltstack"}

// hideMachinePaths puts an overlayfs whiteout for each of paths in the
// upper directory of the overlay of ovs that holds it, whether or not
// the machine has the path now: a plain host of the same cluster may
// create it later as its mount point, and a whiteout over nothing hides
// nothing.
func hideMachinePaths(fs *os.Root, ovs []overlay, paths []string) error {
	for _, p := range paths {
		for _, ov := range ovs {
			rel, ok := strings.CutPrefix(p, ov.InHost+"/")
			if !ok {
				continue
			}
			w := filepath.Join(ov.Backing, "upper", rel)
			if err := fs.MkdirAll(filepath.Dir(w), 0o755); err != nil {
				return err
			}
			if err := syscall.Mknod(filepath.Join(fs.Name(), w), syscall.S_IFCHR, 0); err != nil {
				return fmt.Errorf("whiteout %s: %w", p, err)
			}
			break
		}
	}
	return nil
}

// writeAccountFile writes the machine's file src, without name's line and
// with line appended, to dst in fs, owned as src is.
func writeAccountFile(fs *os.Root, src, dst string, mode os.FileMode, name, line string) error {
	b, err := os.ReadFile(src)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	var out strings.Builder
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if l != "" && !strings.HasPrefix(l, name+":") {
			out.WriteString(l + "\n")
		}
	}
	out.WriteString(line + "\n")
	if err := fs.WriteFile(dst, []byte(out.String()), mode); err != nil {
		return err
	}
	if err := fs.Chmod(dst, mode); err != nil {
		return err
	}
	if uid, gid, ok := ownerOf(src); ok {
		return fs.Lchown(dst, uid, gid)
	}
	return nil
}

// makeMountPoint makes sure dir exists in the host: inside an overlaid
// directory it is created in the host's upper directory; elsewhere (/run,
// /var) it must exist on the machine, where it is created if missing, as
// an empty directory at Salt's standard path.
func makeMountPoint(fs *os.Root, dir string, ovs []overlay) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	for _, ov := range ovs {
		if rel, ok := strings.CutPrefix(dir, ov.InHost+"/"); ok {
			return fs.MkdirAll(filepath.Join(ov.Backing, "upper", rel), 0o755)
		}
	}
	return os.MkdirAll(dir, 0o755)
}

// ownerOf returns the owner of path on the machine.
func ownerOf(path string) (uid, gid int, ok bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, 0, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return int(st.Uid), int(st.Gid), true
}

// sudoers returns the content of a host's private /etc/sudoers.d/brine-testhosts,
// or "" when the host has no sudo rights at all.
func sudoers(user string, o HostOptions) string {
	var b strings.Builder
	b.WriteString("# generated by internal/testhosts\n")
	if o.RequireTTY {
		b.WriteString("Defaults requiretty\n")
	}
	if o.SudoKeepEnv {
		fmt.Fprintf(&b, "Defaults:%s !env_reset\n", user)
	}
	switch {
	case o.NoSudo:
		if !o.RequireTTY {
			return ""
		}
	case o.SudoPassword:
		// A fresh prompt every time, and no lecture to confuse prompt scrapers.
		fmt.Fprintf(&b, "Defaults:%s !lecture, timestamp_timeout=0\n", user)
		fmt.Fprintf(&b, "%s ALL=(ALL:ALL) ALL\n", user)
	default:
		fmt.Fprintf(&b, "%s ALL=(ALL:ALL) NOPASSWD: ALL\n", user)
	}
	return b.String()
}
