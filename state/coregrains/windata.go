package coregrains

import (
	"encoding/binary"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// This file holds the Windows grains' pure logic, compiled everywhere so
// that Linux runs its tests too; core_windows.go reads the registry and
// the Win32 APIs that feed it.

var (
	serverNoYear = regexp.MustCompile(`^Microsoft[^\d]+(Server|Datacenter|Standard|Essentials)$`)
	digitsRe     = regexp.MustCompile(`^\d+`)
	releaseRe    = regexp.MustCompile(`^R\d+$`)
	clientVerRe  = regexp.MustCompile(`^(?:(\d+(\.\d+)?)|Thin|Vista|XP$)`) // re.match anchors at the start only
)

// windowsOSRelease is core.py _windows_os_release_grain: the osrelease
// grain from the OS caption ("Microsoft Windows 10 Pro" → "10",
// "Microsoft Windows Server 2019 Standard" → "2019Server"), falling back
// to the release number (platform.release, with the server names of
// the same kernel) when the caption names none.
func windowsOSRelease(caption string, server bool, platformRelease string) string {
	version, release := "Unknown", ""
	var osRelease string
	if strings.Contains(caption, "Server") {
		if serverNoYear.MatchString(caption) {
			version = "2019"
		} else {
			for _, item := range strings.Split(caption, " ") {
				if digitsRe.MatchString(item) {
					version = item
				}
				if releaseRe.MatchString(item) {
					release = item
				}
			}
		}
		osRelease = version + "Server" + release
	} else {
		for _, item := range strings.Split(caption, " ") {
			if clientVerRe.MatchString(item) {
				version = item
			}
		}
		osRelease = version
	}
	if osRelease == "Unknown" {
		osRelease = platformRelease
		names := map[string]string{"Vista": "2008Server", "7": "2008ServerR2", "8": "2012Server",
			"8.1": "2012ServerR2", "10": "2016Server"}
		if n, ok := names[osRelease]; ok && server {
			osRelease = n
		}
	}
	return osRelease
}

// windowsOSReleaseInfo is core.py's osrelease_info for Windows: the
// parts around "Server" (R dropped), else the dotted parts; digits as
// integers.
func windowsOSReleaseInfo(osrelease string) []any {
	var parts []string
	if before, after, ok := strings.Cut(osrelease, "Server"); ok {
		parts = []string{before, strings.TrimLeft(after, "R")}
	} else {
		parts = strings.Split(osrelease, ".")
	}
	out := []any{}
	for _, p := range parts {
		if p == "" {
			continue
		}
		if isDigits(p) {
			n, _ := strconv.Atoi(p)
			out = append(out, n)
			continue
		}
		out = append(out, p)
	}
	return out
}

// windowsVirtual is core.py _windows_virtual: the hypervisor named by the
// system manufacturer, product name and BIOS string.
func windowsVirtual(manufacturer, product, bios string) map[string]any {
	g := map[string]any{"virtual": "physical"}
	switch {
	case strings.Contains(manufacturer, "QEMU"):
		g["virtual"] = "kvm"
	case strings.Contains(bios, "VRTUAL"): // (not a typo, as in Salt)
		g["virtual"] = "HyperV"
	case strings.Contains(bios, "A M I"):
		g["virtual"] = "VirtualPC"
	case strings.Contains(bios, "Xen"):
		g["virtual"] = "Xen"
		if strings.Contains(product, "HVM domU") {
			g["virtual_subtype"] = "HVM domU"
		}
	case strings.Contains(bios, "AMAZON"):
		g["virtual"] = "EC2"
	case strings.Contains(manufacturer, "Bochs"):
		g["virtual"] = "kvm"
	case strings.Contains(product, "oVirt"):
		g["virtual"], g["virtual_subtype"] = "kvm", "oVirt"
	case strings.Contains(product, "RHEV Hypervisor"):
		g["virtual"], g["virtual_subtype"] = "kvm", "rhev"
	case strings.Contains(product, "VirtualBox"):
		g["virtual"] = "VirtualBox"
	case strings.Contains(product, "VMware"):
		g["virtual"] = "VMware"
	case strings.Contains(manufacturer, "Microsoft") && strings.Contains(product, "Virtual Machine"):
		g["virtual"] = "VirtualPC"
	case strings.Contains(product, "OpenStack"):
		g["virtual"] = "OpenStack"
	case strings.Contains(manufacturer, "Parallels"):
		g["virtual"] = "Parallels"
	case strings.Contains(product, "CloudStack KVM Hypervisor"):
		g["virtual"], g["virtual_subtype"] = "kvm", "cloudstack"
	}
	return g
}

// smbiosInfo is what the grains take from the firmware's SMBIOS tables:
// WMI's Win32_BIOS.SerialNumber and Win32_ComputerSystemProduct.UUID come
// from the System Information structure (type 1), Win32_BaseBoard from
// the Baseboard structure (type 2).
type smbiosInfo struct {
	Serial, UUID              string
	BoardProduct, BoardSerial string
	hasSystem, hasBoard       bool
}

// parseSMBIOS reads the raw SMBIOS data GetSystemFirmwareTable('RSMB')
// returns: an 8-byte header (calling method, major, minor, DMI revision,
// length) and the structure table. Malformed data ends the walk; what
// was read so far is kept.
func parseSMBIOS(raw []byte) (smbiosInfo, error) {
	var info smbiosInfo
	if len(raw) < 8 {
		return info, fmt.Errorf("smbios: %d bytes, want an 8-byte header", len(raw))
	}
	n := int(binary.LittleEndian.Uint32(raw[4:8]))
	table := raw[8:]
	if n < len(table) {
		table = table[:n]
	}
	for len(table) >= 4 {
		typ, hlen := table[0], int(table[1])
		if hlen < 4 || hlen > len(table) {
			return info, fmt.Errorf("smbios: structure type %d with length %d", typ, hlen)
		}
		formatted := table[:hlen]
		strs, rest := smbiosStrings(table[hlen:])
		str := func(off int) string {
			if off >= len(formatted) {
				return ""
			}
			i := int(formatted[off])
			if i == 0 || i > len(strs) {
				return ""
			}
			return strings.TrimSpace(strs[i-1])
		}
		switch typ {
		case 1:
			info.hasSystem = true
			info.Serial = str(7)
			if len(formatted) >= 24 {
				info.UUID = smbiosUUID(formatted[8:24])
			}
		case 2:
			info.hasBoard = true
			info.BoardProduct, info.BoardSerial = str(5), str(7)
		case 127:
			return info, nil
		}
		table = rest
	}
	return info, nil
}

// smbiosStrings splits the string set after a structure: NUL-terminated
// strings ending with an extra NUL (two NULs when there are none).
func smbiosStrings(b []byte) ([]string, []byte) {
	var out []string
	i := 0
	for i < len(b) {
		j := i
		for j < len(b) && b[j] != 0 {
			j++
		}
		if j == i {
			if len(out) == 0 && j+1 < len(b) && b[j+1] == 0 {
				j++
			}
			return out, b[min(j+1, len(b)):]
		}
		out = append(out, string(b[i:j]))
		i = j + 1
	}
	return out, nil
}

// smbiosUUID formats the 16 UUID bytes as WMI does (lowercased by Salt):
// the first three fields are little-endian since SMBIOS 2.6.
func smbiosUUID(b []byte) string {
	allSame := true
	for _, x := range b {
		if x != b[0] {
			allSame = false
		}
	}
	if allSame && (b[0] == 0 || b[0] == 0xff) {
		return ""
	}
	return fmt.Sprintf("%08x-%04x-%04x-%x-%x", binary.LittleEndian.Uint32(b[0:4]),
		binary.LittleEndian.Uint16(b[4:6]), binary.LittleEndian.Uint16(b[6:8]), b[8:10], b[10:16])
}
