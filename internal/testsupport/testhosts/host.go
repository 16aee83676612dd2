package testhosts

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// hostState is the recorded, static description of one host; the pids of its
// processes live in pid files in Dir so that Cleanup finds them even when
// the owner crashed before writing state.json.
type hostState struct {
	ID      string      `json:"id"`
	Index   int         `json:"index"`
	IP      string      `json:"ip"`
	Port    int         `json:"port"`
	Netns   string      `json:"netns,omitempty"`
	Veth    string      `json:"veth,omitempty"`
	Dir     string      `json:"dir"`
	Options HostOptions `json:"options"`
	// PythonDirs are the directories whose python* entries a NoPython host
	// hides (see hidePython).
	PythonDirs []string `json:"python_dirs,omitempty"`
}

func (h *hostState) path(name string) string { return filepath.Join(h.Dir, name) }
func (h *hostState) addr() string            { return net.JoinHostPort(h.IP, strconv.Itoa(h.Port)) }
func (h *hostState) hostKeyPath() string     { return h.path("ssh_host_ed25519_key") }

// privateDir is a path that each host sees backed by its own directory.
type privateDir struct {
	InHost  string // path inside the host
	Backing string // name under the host's fs/ directory
	Mode    os.FileMode
	Owner   bool // owned by the login user
	File    bool
}

// privateDirs lists the private paths of a host with options o for login
// user u. Longer paths come after shorter ones only where they do not
// nest. /tmp and /var/tmp are 1777 as on any Debian machine: the sticky
// bit is os.ModeSticky, not 0o1000, which os.Chmod drops without a word.
// A PrivateSystem host has no bind mounts inside its system overlays:
// they are private already.
func privateDirs(u loginUser, o HostOptions) []privateDir {
	dirs := allPrivateDirs(u)
	if !o.PrivateSystem {
		return dirs
	}
	sys := hostOverlays(o)[len(overlays):]
	return slices.DeleteFunc(dirs, func(pd privateDir) bool { return underOverlay(pd.InHost, sys) })
}

func allPrivateDirs(u loginUser) []privateDir {
	const tmpMode = os.ModeSticky | 0o777
	dirs := []privateDir{
		{InHost: "/tmp", Backing: "tmp", Mode: tmpMode},
		{InHost: "/var/tmp", Backing: "var_tmp", Mode: tmpMode},
		{InHost: "/etc/salt", Backing: "etc_salt", Mode: 0o755},
		{InHost: "/root", Backing: "root", Mode: 0o700},
		{InHost: u.Home, Backing: "home", Mode: 0o755, Owner: true},
		{InHost: "/etc/sudoers.d", Backing: "sudoers.d", Mode: 0o755},
		{InHost: "/etc/hosts", Backing: "hosts", Mode: 0o644, File: true},
		{InHost: "/etc/resolv.conf", Backing: "resolv.conf", Mode: 0o644, File: true},
		// What a promoted minion (salt-ssh minion.bootstrap) installs,
		// writes and runs from, so each host has its own daemon.
		{InHost: "/usr/local/sbin", Backing: "usr_local_sbin", Mode: 0o755},
		{InHost: "/etc/init.d", Backing: "init.d", Mode: 0o755},
		{InHost: "/etc/systemd/system", Backing: "systemd_system", Mode: 0o755},
		{InHost: "/run/salt", Backing: "run_salt", Mode: 0o755},
		{InHost: "/var/log/salt", Backing: "var_log_salt", Mode: 0o755},
		{InHost: "/var/cache/salt", Backing: "var_cache_salt", Mode: 0o755},
	}
	for _, rc := range []string{"0", "1", "2", "3", "4", "5", "6", "S"} {
		dirs = append(dirs, privateDir{InHost: "/etc/rc" + rc + ".d", Backing: "rc" + rc + ".d", Mode: 0o755})
	}
	return dirs
}

// prepareHost creates host h's directory: private trees, sudoers, hosts
// file, host key and authorized_keys (the client key). Isolation-only parts
// are skipped when !isolated.
func (c *Cluster) prepareHost(h *hostState, clientPub []byte) error {
	if err := os.MkdirAll(h.path("fs"), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", h.Dir, err)
	}
	if _, err := newKey(h.hostKeyPath(), "root@"+h.ID); err != nil {
		return fmt.Errorf("host key of %s: %w", h.ID, err)
	}
	if h.Options.HostCert {
		if err := c.signHostKey(h); err != nil {
			return err
		}
	}
	if err := os.WriteFile(h.path("authorized_keys"), clientPub, 0o644); err != nil {
		return fmt.Errorf("authorized_keys of %s: %w", h.ID, err)
	}
	if !c.st.Isolated {
		return nil
	}
	// Every change to the private trees goes through an os.Root on the
	// host's fs directory: no path, symlink or ".." in them can make a
	// chmod or chown land on the controller's own /tmp, /run or home,
	// which the holder later mounts them over.
	fs, err := os.OpenRoot(h.path("fs"))
	if err != nil {
		return fmt.Errorf("open %s: %w", h.path("fs"), err)
	}
	defer fs.Close()
	if err := writeOverlays(fs, c.st.User, h.Options); err != nil {
		return fmt.Errorf("private accounts of %s: %w", h.ID, err)
	}
	for _, pd := range privateDirs(c.st.User, h.Options) {
		if err := c.makePrivate(fs, h, pd); err != nil {
			return fmt.Errorf("private %s of %s: %w", pd.InHost, h.ID, err)
		}
	}
	if h.Options.NoPython {
		if err := c.hidePython(h); err != nil {
			return fmt.Errorf("hide python on %s: %w", h.ID, err)
		}
	}
	if s := sudoers(c.st.User.Name, h.Options); s != "" {
		if err := fs.WriteFile(filepath.Join("sudoers.d", "brine-testhosts"), []byte(s), 0o440); err != nil {
			return fmt.Errorf("sudoers of %s: %w", h.ID, err)
		}
	}
	return nil
}

// makePrivate creates pd's backing file or directory inside fs (the host's
// fs directory) with pd's mode, owned by the login user where pd says so.
func (c *Cluster) makePrivate(fs *os.Root, h *hostState, pd privateDir) error {
	if pd.File {
		body := c.hostsFile(h)
		if pd.InHost == "/etc/resolv.conf" {
			body = resolvConf
		}
		return fs.WriteFile(pd.Backing, []byte(body), pd.Mode)
	}
	if err := fs.Mkdir(pd.Backing, pd.Mode.Perm()); err != nil {
		return err
	}
	if err := fs.Chmod(pd.Backing, pd.Mode); err != nil { // Mkdir obeys the umask
		return err
	}
	if !pd.Owner {
		return nil
	}
	// A home as useradd would make it, so login shells behave normally.
	if err := copySkel(fs, pd.Backing, c.st.User); err != nil {
		return err
	}
	return fs.Lchown(pd.Backing, c.st.User.UID, c.st.User.GID)
}

// copySkel copies /etc/skel's regular files into dir of fs, owned by u.
func copySkel(fs *os.Root, dir string, u loginUser) error {
	ents, _ := os.ReadDir("/etc/skel")
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/etc/skel", e.Name()))
		if err != nil {
			return err
		}
		f := filepath.Join(dir, e.Name())
		if err := fs.WriteFile(f, b, 0o644); err != nil {
			return err
		}
		if err := fs.Lchown(f, u.UID, u.GID); err != nil {
			return err
		}
	}
	return nil
}

// resolvConf is every host's /etc/resolv.conf: no name server, so a DNS
// lookup on a host (fqdn grains, sudo) fails at once on its own loopback
// instead of waiting on packets to the machine's resolver, which test
// hosts must never reach; names resolve from the private /etc/hosts.
const resolvConf = "# testhosts: no name server; names come from /etc/hosts\noptions timeout:1 attempts:1\n"

// hostsFile is the host's private /etc/hosts: its own name on 127.0.1.1 (so
// sudo can resolve the hostname) and every host of the cluster by ID.
func (c *Cluster) hostsFile(self *hostState) string {
	var b strings.Builder
	b.WriteString("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n")
	fmt.Fprintf(&b, "127.0.1.1\t%s\n", self.ID)
	if c.st.Mode == ModeNetns {
		fmt.Fprintf(&b, "%s\tcontroller\n", bridgeIP(c.st.Cluster))
		for _, h := range c.st.Hosts {
			fmt.Fprintf(&b, "%s\t%s\n", h.IP, h.ID)
		}
	}
	return b.String()
}

// sshdConfig renders host h's sshd_config.
func (c *Cluster) sshdConfig(h *hostState) string {
	pw := "no"
	if h.Options.PasswordAuth {
		pw = "yes"
	}
	listen := "0.0.0.0"
	if c.st.Mode == ModeLoopback {
		listen = "127.0.0.1"
	}
	sftp := "internal-sftp"
	if _, err := os.Stat("/usr/lib/openssh/sftp-server"); err == nil {
		sftp = "/usr/lib/openssh/sftp-server"
	}
	cert := ""
	if h.Options.HostCert {
		cert = "HostCertificate " + h.hostCertPath() + "\n"
	}
	return cert + fmt.Sprintf(`# generated by internal/testhosts for %[1]s
ListenAddress %[2]s:%[3]d
AddressFamily inet
HostKey %[4]s
PidFile none
AuthorizedKeysFile %[5]s .ssh/authorized_keys
StrictModes no
UsePAM no
PubkeyAuthentication yes
PasswordAuthentication %[6]s
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
UseDNS no
PrintMotd no
PrintLastLog no
X11Forwarding no
MaxStartups 200
MaxSessions 64
LogLevel %[7]s
AcceptEnv LANG LC_*
Subsystem sftp %[8]s
`, h.ID, listen, h.Port, h.hostKeyPath(), h.path("authorized_keys"), pw, c.st.LogLevel, sftp)
}

// holderScript is run by the holder process inside the host's fresh mount
// and UTS namespaces: it bind-mounts the private directories, hides python
// if asked, sets the hostname, says "ready" and then sleeps forever to keep
// the namespaces alive for sshd, StartHost and Exec.
func (c *Cluster) holderScript(h *hostState) string {
	var b strings.Builder
	b.WriteString("set -e\n")
	for _, ov := range hostOverlays(h.Options) {
		base := filepath.Join(h.path("fs"), ov.Backing)
		fmt.Fprintf(&b, "mount -t overlay brine-%s -o %s %s\n", ov.Backing,
			shq("lowerdir="+ov.InHost+",upperdir="+base+"/upper,workdir="+base+"/work"), shq(ov.InHost))
	}
	for _, pd := range privateDirs(c.st.User, h.Options) {
		fmt.Fprintf(&b, "mount --bind %s %s\n", shq(filepath.Join(h.path("fs"), pd.Backing)), shq(pd.InHost))
	}
	for i, d := range h.PythonDirs {
		base := filepath.Join(h.path("fs"), "nopython", strconv.Itoa(i))
		fmt.Fprintf(&b, "mount -t overlay brine-nopython -o %s %s\n",
			shq("lowerdir="+d+",upperdir="+base+"/upper,workdir="+base+"/work"), shq(d))
	}
	fmt.Fprintf(&b, "hostname %s\n", shq(h.ID))
	b.WriteString("echo ready\nexec sleep infinity </dev/null >/dev/null 2>&1\n")
	return b.String()
}

// pythonDirs finds every directory a login shell could search for python:
// the system bin directories and the controller's own PATH (which here
// includes pyenv shims), resolved through symlinks, that hold python*
// entries; it maps each to those entry names. Directories under private
// paths (/root, /tmp, the home) need no hiding: they are empty in a host.
func pythonDirs(private []privateDir) map[string][]string {
	dirs := []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"}
	dirs = append(dirs, filepath.SplitList(os.Getenv("PATH"))...)
	out := map[string][]string{}
	for _, d := range dirs {
		real, err := filepath.EvalSymlinks(d)
		if err != nil || !filepath.IsAbs(real) || underPrivate(real, private) {
			continue
		}
		if _, done := out[real]; done {
			continue
		}
		ms, _ := filepath.Glob(filepath.Join(real, "python*"))
		var names []string
		for _, m := range ms {
			if st, err := os.Lstat(m); err == nil && !st.IsDir() {
				names = append(names, filepath.Base(m))
			}
		}
		if len(names) > 0 {
			out[real] = names
		}
	}
	return out
}

// hidePython prepares, for a NoPython host, one overlayfs upper directory
// per python directory holding a whiteout (a 0/0 character device) for each
// python* entry; the holder mounts them over the real directories, so the
// names do not exist at all in the host (a /dev/null bind mount would still
// be reported by bash's `command -v`). Writes to those directories land in
// the host's upper directory, so installing python there stays per host.
func (c *Cluster) hidePython(h *hostState) error {
	dirs := pythonDirs(privateDirs(c.st.User, h.Options))
	keys := make([]string, 0, len(dirs))
	for d := range dirs {
		keys = append(keys, d)
	}
	sort.Strings(keys)
	for i, d := range keys {
		base := filepath.Join(h.path("fs"), "nopython", strconv.Itoa(i))
		for _, sub := range []string{"upper", "work"} {
			if err := os.MkdirAll(filepath.Join(base, sub), 0o755); err != nil {
				return err
			}
		}
		for _, n := range dirs[d] {
			if err := syscall.Mknod(filepath.Join(base, "upper", n), syscall.S_IFCHR, 0); err != nil {
				return fmt.Errorf("whiteout %s/%s: %w", d, n, err)
			}
		}
		h.PythonDirs = append(h.PythonDirs, d)
	}
	return nil
}

func underPrivate(p string, private []privateDir) bool {
	for _, pd := range private {
		if p == pd.InHost || strings.HasPrefix(p, pd.InHost+"/") {
			return true
		}
	}
	return false
}

// shq quotes s for sh.
func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// cleanEnv is the environment of everything the harness starts in a host,
// so the controller's PATH (pyenv, cargo, go) never leaks into one.
func cleanEnv() []string {
	return []string{
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"HOME=/root", "LANG=C.UTF-8",
	}
}

// startHolder starts host h's namespace holder and waits for its "ready".
func (c *Cluster) startHolder(ctx context.Context, h *hostState) error {
	script := h.path("holder.sh")
	if err := os.WriteFile(script, []byte(c.holderScript(h)), 0o755); err != nil {
		return fmt.Errorf("write holder script: %w", err)
	}
	args := []string{"unshare", "--mount", "--uts", "--propagation", "private", "sh", script}
	if c.st.Mode == ModeNetns {
		args = append([]string{"ip", "netns", "exec", h.Netns}, args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = cleanEnv()
	cmd.Dir = "/"
	logf, err := os.OpenFile(h.path("holder.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd.Stderr = logf
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	ref, err := startProc(cmd, c.st.Detached, &c.reaped)
	if err != nil {
		return fmt.Errorf("start holder of %s: %w", h.ID, err)
	}
	if err := writeJSON(h.path("holder.pid"), ref, 0o644); err != nil {
		return err
	}
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(out).ReadString('\n')
		line <- s
	}()
	select {
	case s := <-line:
		if strings.TrimSpace(s) != "ready" {
			b, _ := os.ReadFile(h.path("holder.log"))
			return fmt.Errorf("start holder of %s: %s", h.ID, strings.TrimSpace(string(b)))
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("start holder of %s: %w", h.ID, context.Cause(ctx))
	}
}

// holder returns host h's holder process, if it runs.
func holderOf(hostDir string) (procRef, bool) {
	var r procRef
	if err := readJSON(filepath.Join(hostDir, "holder.pid"), &r); err != nil {
		return r, false
	}
	return r, r.alive()
}

// nsenter returns the argv prefix that runs a command inside host h's
// namespaces (empty when the cluster is not isolated).
func (c *Cluster) nsenter(h *hostState) ([]string, error) {
	if !c.st.Isolated {
		return nil, nil
	}
	r, ok := holderOf(h.Dir)
	if !ok {
		return nil, fmt.Errorf("namespaces of %s are gone", h.ID)
	}
	args := []string{"nsenter", "-t", strconv.Itoa(r.Pid), "-m", "-u"}
	if c.st.Mode == ModeNetns {
		args = append(args, "-n")
	}
	return append(args, "--"), nil
}

// startSSHD writes host h's sshd_config, starts sshd inside the host and
// waits until it answers with an SSH banner.
func (c *Cluster) startSSHD(ctx context.Context, h *hostState) error {
	if err := os.WriteFile(h.path("sshd_config"), []byte(c.sshdConfig(h)), 0o644); err != nil {
		return fmt.Errorf("write sshd_config: %w", err)
	}
	pre, err := c.nsenter(h)
	if err != nil {
		return err
	}
	listening := countListening(h)
	args := append(pre, c.st.SSHD, "-D", "-f", h.path("sshd_config"), "-E", h.path("sshd.log"))
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = cleanEnv()
	cmd.Dir = "/"
	ref, err := startProc(cmd, c.st.Detached, &c.reaped)
	if err != nil {
		return fmt.Errorf("start sshd of %s: %w", h.ID, err)
	}
	if err := writeJSON(h.path("sshd.pid"), ref, 0o644); err != nil {
		return err
	}
	if h.Options.BehindHost != "" {
		// The controller has no route to it: wait for sshd to say so.
		return waitListening(ctx, h, ref, listening)
	}
	return waitBanner(ctx, h, ref)
}

// listeningLine is what sshd logs once its socket is bound.
const listeningLine = "Server listening on "

func countListening(h *hostState) int {
	b, _ := os.ReadFile(h.path("sshd.log"))
	return strings.Count(string(b), listeningLine)
}

// waitListening polls h's sshd log until a new "Server listening" line
// appears after the before that were there when sshd started.
func waitListening(ctx context.Context, h *hostState, sshd procRef, before int) error {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	for countListening(h) <= before {
		if !sshd.alive() {
			b, _ := os.ReadFile(h.path("sshd.log"))
			return fmt.Errorf("sshd of %s exited: %s", h.ID, strings.TrimSpace(string(b)))
		}
		if err := sleepCtx(ctx, 10*time.Millisecond); err != nil {
			return fmt.Errorf("wait for sshd of %s to listen: %w", h.ID, err)
		}
	}
	return nil
}

// waitBanner polls h until sshd sends its "SSH-2.0-" banner.
func waitBanner(ctx context.Context, h *hostState, sshd procRef) error {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	for {
		if !sshd.alive() {
			b, _ := os.ReadFile(h.path("sshd.log"))
			return fmt.Errorf("sshd of %s exited: %s", h.ID, strings.TrimSpace(string(b)))
		}
		if bannerOK(ctx, h.addr()) {
			return nil
		}
		if err := sleepCtx(ctx, 10*time.Millisecond); err != nil {
			return fmt.Errorf("wait for sshd of %s on %s: %w", h.ID, h.addr(), err)
		}
	}
}

func bannerOK(ctx context.Context, addr string) bool {
	d := net.Dialer{Timeout: 500 * time.Millisecond}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return false
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(2 * time.Second))
	s, err := bufio.NewReader(conn).ReadString('\n')
	return err == nil && strings.HasPrefix(s, "SSH-")
}

// hostProcs lists the sshd of the host in hostDir and everything else
// running in its namespaces; the holder too when withHolder.
func hostProcs(hostDir string, withHolder bool) []procRef {
	refs := clusterProcs([]string{hostDir})
	if withHolder {
		return refs
	}
	holder, _ := holderOf(hostDir)
	return slices.DeleteFunc(refs, func(r procRef) bool { return r == holder })
}

// clusterProcs is hostProcs (holders included) for every host directory
// at once, with one pass over /proc instead of one per host: a thousand
// hosts' teardown would otherwise read every process's ns/mnt link a
// thousand times.
func clusterProcs(hostDirs []string) []procRef {
	var refs []procRef
	known := map[int]bool{}
	wantNS := map[string]bool{}
	for _, hd := range hostDirs {
		var sshd procRef
		if readJSON(filepath.Join(hd, "sshd.pid"), &sshd) == nil && sshd.alive() {
			refs = append(refs, sshd)
			known[sshd.Pid] = true
		}
		holder, ok := holderOf(hd)
		if !ok {
			continue
		}
		if ns, err := holder.mntNS(); err == nil {
			wantNS[ns] = true
		}
		refs = append(refs, holder)
		known[holder.Pid] = true
	}
	if len(wantNS) == 0 {
		return refs
	}
	for ns, pids := range pidsByMntNS() {
		if !wantNS[ns] {
			continue
		}
		for _, pid := range pids {
			if r, err := refOf(pid); err == nil && !known[pid] {
				refs = append(refs, r)
			}
		}
	}
	return refs
}

// stopHostProcs kills the sshd of the host in hostDir and everything else
// running in its namespaces, but not the holder.
func stopHostProcs(ctx context.Context, hostDir string) error {
	return killAll(ctx, hostProcs(hostDir, false))
}
