package beacons

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

func readLoadAvg() ([]float64, error) {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return nil, fmt.Errorf("load averages: %w", err)
	}
	return parseLoadAvg(string(b))
}

func parseLoadAvg(s string) ([]float64, error) {
	f := strings.Fields(s)
	if len(f) < 3 {
		return nil, fmt.Errorf("/proc/loadavg: %q", s)
	}
	out := make([]float64, 3)
	for i := range out {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return nil, fmt.Errorf("/proc/loadavg: %q", s)
		}
		out[i] = v
	}
	return out, nil
}

// readMemPercent is psutil's Linux virtual_memory: (total - available)
// / total, with MemAvailable (or free + buffers + cached on old
// kernels).
func readMemPercent() (float64, error) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, fmt.Errorf("memory usage: %w", err)
	}
	return parseMemPercent(b)
}

func parseMemPercent(b []byte) (float64, error) {
	kv := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			continue
		}
		if v, err := strconv.ParseFloat(f[0], 64); err == nil {
			kv[name] = v
		}
	}
	total := kv["MemTotal"]
	if total <= 0 {
		return 0, fmt.Errorf("/proc/meminfo: no MemTotal")
	}
	avail, ok := kv["MemAvailable"]
	if !ok {
		avail = kv["MemFree"] + kv["Buffers"] + kv["Cached"]
	}
	return round1((total - avail) / total * 100), nil
}

// readMountPoints lists /proc/self/mounts's mount points, octal escapes
// decoded as getmntent does.
func readMountPoints() ([]string, error) {
	b, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		return nil, fmt.Errorf("mount points: %w", err)
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 {
			out = append(out, unescapeMount(f[1]))
		}
	}
	return out, nil
}

func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// readDiskPercent is psutil.disk_usage(path).percent: used over used +
// available to unprivileged users.
func readDiskPercent(path string) (float64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return 0, fmt.Errorf("statfs %s: %w", path, err)
	}
	used := float64(st.Blocks-st.Bfree) * float64(st.Frsize)
	total := used + float64(st.Bavail)*float64(st.Frsize)
	if total == 0 {
		return 0, nil
	}
	return round1(used / total * 100), nil
}
