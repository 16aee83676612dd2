//go:build linux

package coregrains

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// gatherCore runs the independent gatherers concurrently; each owns a
// disjoint set of keys.
func gatherCore(ctx context.Context, o GatherOptions) (map[string]any, error) {
	r := &result{m: make(map[string]any, 96)}
	var uts unix.Utsname
	if err := unix.Uname(&uts); err != nil {
		return nil, err
	}
	un := map[string]any{
		"kernel":        unix.ByteSliceToString(uts.Sysname[:]),
		"nodename":      unix.ByteSliceToString(uts.Nodename[:]),
		"kernelrelease": unix.ByteSliceToString(uts.Release[:]),
		"kernelversion": unix.ByteSliceToString(uts.Version[:]),
		"cpuarch":       unix.ByteSliceToString(uts.Machine[:]),
	}
	r.set(un)
	tasks := []func(){
		func() { r.set(o.osGrains(un["cpuarch"].(string))) },
		func() { r.set(o.cpuMem()) },
		func() { r.set(o.hwGrains()) },
		func() { r.set(o.netGrains(ctx)) },
		func() { r.set(o.processGrains()) },
		func() { r.set(o.systemGrains(ctx)) },
		func() { r.set(o.virtualGrains()) },
		func() { r.set(o.zfsGrains(ctx)) },
	}
	var wg sync.WaitGroup
	for _, t := range tasks {
		wg.Add(1)
		go func() { defer wg.Done(); t() }()
	}
	wg.Wait()
	if rel, _ := r.m["osrelease"].(string); rel != "" {
		r.set(osReleaseData(str(r.m["os"]), str(r.m["osfullname"]), rel))
	}
	r.m["ps"] = "ps -efHww"
	if r.m["virtual"] == "openvzhn" {
		r.m["ps"] = `ps -fH -p $(grep -l "^envID:[[:space:]]*0\\$" /proc/[0-9]*/status | sed -e "s=/proc/\\([0-9]*\\)/.*=\\1=")  | awk '{ $7=""; print }'`
	}
	return r.m, nil
}

func (o GatherOptions) osGrains(cpuarch string) map[string]any {
	osRel, err := o.readFile("/etc/os-release")
	if err != nil {
		osRel, _ = o.readFile("/usr/lib/os-release")
	}
	lsb, _ := o.readFile("/etc/lsb-release")
	g := osData(osRel, lsb)
	g["osarch"] = osArch(str(g["os_family"]), cpuarch)
	g["init"] = o.initSystem()
	return g
}

func (o GatherOptions) cpuMem() map[string]any {
	cpu, _ := o.readFile("/proc/cpuinfo")
	g := cpuData(cpu)
	mem, _ := o.readFile("/proc/meminfo")
	for k, v := range memData(mem) {
		g[k] = v
	}
	if cmd, err := o.readFile("/proc/cmdline"); err == nil {
		if kp := kernelParams(cmd); kp != nil {
			g["kernelparams"] = kp
		}
	}
	if md, err := o.readFile("/proc/mdstat"); err == nil {
		g["mdadm"] = mdadmDevices(md)
	}
	g["num_gpus"], g["gpus"] = o.gpuData()
	return g
}

func mdadmDevices(text string) []any {
	set := map[string]bool{}
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "Personalities : ") || strings.HasPrefix(line, "unused devices:") {
			continue
		}
		if name, _, ok := strings.Cut(line, " : "); ok {
			set[name] = true
		}
	}
	return sortedKeys(set)
}

func (o GatherOptions) hwGrains() map[string]any {
	g := map[string]any{}
	if o.exists("/sys/class/dmi/id") {
		for _, kv := range dmiGrains {
			b, err := os.ReadFile(o.path("/sys/class/dmi/id/" + kv[1]))
			if err != nil {
				continue
			}
			v := strings.TrimSpace(strings.ToValidUTF8(string(b), "\uFFFD"))
			if kv[0] == "uuid" {
				v = strings.ToLower(v)
			}
			g[kv[0]] = v
		}
	}
	disks, ssds := []any{}, []any{}
	entries, _ := os.ReadDir(o.path("/sys/block"))
	for _, e := range entries {
		link, _ := os.Readlink(o.path("/sys/block/" + e.Name()))
		if strings.HasPrefix(link, "../devices/virtual/") {
			continue
		}
		switch rot := o.readTrim("/sys/block/" + e.Name() + "/queue/rotational"); {
		case strings.HasPrefix(rot, "0"):
			ssds = append(ssds, e.Name())
		case strings.HasPrefix(rot, "1"):
			disks = append(disks, e.Name())
		}
	}
	g["disks"], g["ssds"] = disks, ssds
	if id := o.readTrim("/etc/machine-id"); id != "" {
		g["machine_id"] = id
	} else if id := o.readTrim("/var/lib/dbus/machine-id"); id != "" {
		g["machine_id"] = id
	}
	efivars := ""
	for _, p := range []string{"/sys/firmware/efi/efivars", "/sys/firmware/efi/vars"} {
		if o.exists(p) {
			efivars = p
			break
		}
	}
	g["efi"], g["efi-secure-boot"] = efivars != "", o.secureBoot(efivars)
	return g
}

func (o GatherOptions) secureBoot(dir string) bool {
	if dir == "" {
		return false
	}
	pat := "SecureBoot-*"
	if filepath.Base(dir) != "efivars" {
		pat = "SecureBoot-*/data"
	}
	m, _ := filepath.Glob(filepath.Join(o.path(dir), pat))
	if len(m) != 1 {
		return false
	}
	b, err := os.ReadFile(m[0])
	return err == nil && len(b) > 0 && b[len(b)-1] == 1
}

// initSystem is core.py's _linux_init_system without reading the init
// binary when /run/systemd/system settles it.
func (o GatherOptions) initSystem() string {
	if o.exists("/run/systemd/system") {
		return "systemd"
	}
	raw, err := o.readFile("/proc/1/cmdline")
	if err != nil {
		return "unknown"
	}
	args := strings.Fields(strings.ReplaceAll(raw, "\x00", " "))
	if len(args) == 0 {
		return "unknown"
	}
	bin, _ := exec.LookPath(args[0])
	switch {
	case bin != "" && strings.HasSuffix(bin, "bin/init"):
		return o.scanInit(bin)
	case has(args, lookPath("supervisord")):
		return "supervisord"
	case has(args, lookPath("dumb-init")):
		return "dumb-init"
	case has(args, lookPath("tini")):
		return "tini"
	case len(args) == 1 && args[0] == "runit", has(args, "/sbin/my_init"):
		return "runit"
	}
	return "unknown"
}

func (o GatherOptions) scanInit(bin string) string {
	b, err := os.ReadFile(o.path(bin))
	if err != nil {
		return "unknown"
	}
	lower := strings.ToLower(string(b))
	best, at := "unknown", len(lower)+1
	for _, name := range []string{"upstart", "sysvinit", "systemd"} {
		if i := strings.Index(lower, name); i >= 0 && i < at {
			best, at = name, i
		}
	}
	return best
}

func lookPath(name string) string {
	p, err := exec.LookPath(name)
	if err != nil {
		return "\x00none"
	}
	return p
}

// systemGrains holds what Salt gets from commands: systemd (only when
// systemctl and localectl are installed, as core.py checks) and selinux
// (only when selinuxenabled is).
func (o GatherOptions) systemGrains(ctx context.Context) map[string]any {
	g := map[string]any{}
	if _, err := exec.LookPath("selinuxenabled"); err == nil {
		g["selinux"] = o.selinux()
	}
	_, e1 := exec.LookPath("systemctl")
	_, e2 := exec.LookPath("localectl")
	if e1 == nil && e2 == nil {
		g["systemd"] = systemdInfo(ctx)
	}
	_, err := exec.LookPath("transactional-update")
	g["transactional"] = err == nil
	return g
}

func (o GatherOptions) selinux() map[string]any {
	enf := o.readTrim("/sys/fs/selinux/enforce")
	s := map[string]any{"enabled": enf != ""}
	if _, err := exec.LookPath("getenforce"); err == nil {
		switch enf {
		case "1":
			s["enforced"] = "Enforcing"
		case "0":
			s["enforced"] = "Permissive"
		default:
			s["enforced"] = "Disabled"
		}
	}
	return s
}

// systemdInfo runs `systemctl --version` once: its feature line exists
// nowhere else.
func systemdInfo(ctx context.Context) map[string]any {
	out := map[string]any{"version": "UNDEFINED", "features": ""}
	b, err := exec.CommandContext(ctx, "systemctl", "--version").Output()
	if err != nil {
		return out
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) >= 2 && strings.HasPrefix(lines[0], "systemd ") {
		if f := strings.Fields(lines[0]); len(f) > 1 {
			out["version"] = f[1]
		}
		out["features"] = lines[1]
	}
	return out
}

// virtualGrains detects the virtualisation the host runs under from the
// same evidence systemd-detect-virt uses, mapped to Salt's names
// (core.py _virtual).
func (o GatherOptions) virtualGrains() map[string]any {
	g := map[string]any{"virtual": "physical"}
	if sub := o.containerType(); sub != "" {
		g["virtual"], g["virtual_subtype"] = "container", sub
		return g
	}
	vendor := o.readTrim("/sys/class/dmi/id/sys_vendor")
	product := o.readTrim("/sys/class/dmi/id/product_name")
	bios := o.readTrim("/sys/class/dmi/id/bios_vendor")
	cpu, _ := o.readFile("/proc/cpuinfo")
	hyper := strings.Contains(cpu, " hypervisor")
	switch {
	case strings.Contains(vendor, "Amazon EC2"):
		g["virtual"], g["virtual_subtype"] = "Nitro", "Amazon EC2"
	case strings.Contains(vendor, "QEMU") || strings.Contains(product, "KVM") || strings.Contains(bios, "SeaBIOS"):
		if hyper {
			g["virtual"] = "kvm"
		} else {
			g["virtual"] = "qemu"
		}
	case strings.Contains(strings.ToLower(vendor), "vmware"):
		g["virtual"] = "VMware"
	case strings.Contains(vendor, "Microsoft"):
		g["virtual"] = "VirtualPC"
	case strings.Contains(product, "VirtualBox") || strings.Contains(vendor, "innotek"):
		g["virtual"] = "oracle"
	case strings.Contains(vendor, "Xen") || o.readTrim("/sys/hypervisor/type") == "xen":
		g["virtual"] = "xen"
	case strings.Contains(vendor, "Bochs"):
		g["virtual"] = "bochs"
	case strings.Contains(vendor, "Google"):
		g["virtual"] = "kvm"
	case hyper:
		g["virtual"] = "kvm"
	}
	return g
}

func (o GatherOptions) containerType() string {
	env, _ := o.readFile("/proc/1/environ")
	for _, kv := range strings.Split(env, "\x00") {
		if v, ok := strings.CutPrefix(kv, "container="); ok {
			switch {
			case strings.Contains(v, "lxc"):
				return "LXC"
			case strings.Contains(v, "podman"):
				return "Podman"
			case strings.Contains(v, "docker"):
				return "Docker"
			case v == "systemd-nspawn":
				return ""
			}
		}
	}
	switch {
	case o.exists("/run/.containerenv"):
		return "Podman"
	case o.exists("/.dockerenv"):
		return "Docker"
	}
	return ""
}
