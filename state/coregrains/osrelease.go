package coregrains

import (
	"regexp"
	"strconv"
	"strings"
)

// parseOSRelease parses an os-release file (freedesktop.org format):
// KEY=value lines, values optionally quoted with shell-style escapes.
func parseOSRelease(text string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		out[k] = unquoteShell(v)
	}
	return out
}

func unquoteShell(v string) string {
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		q := v[0]
		v = v[1 : len(v)-1]
		if q == '"' {
			r := strings.NewReplacer(`\"`, `"`, `\\`, `\`, "\\$", "$", "\\`", "`")
			v = r.Replace(v)
		}
	}
	return v
}

// lsbRE is salt/grains/core.py's _LSB_REGEX for /etc/lsb-release lines.
var lsbRE = regexp.MustCompile(`^(DISTRIB_(?:ID|RELEASE|CODENAME|DESCRIPTION))=(?:'|")?([\w\s.\-_]+)(?:'|")?`)

// parseLSBRelease reads /etc/lsb-release into lsb_distrib_* grains.
func parseLSBRelease(text string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		m := lsbRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		out["lsb_"+strings.ToLower(m[1])] = strings.TrimRight(m[2], " \t\r\n")
	}
	return out
}

var (
	versionRE      = regexp.MustCompile(`^\d[\d.+\-a-z]* \((?P<codename>.+)\)`)
	replaceLinuxRE = regexp.MustCompile(`(?i)\W(?:gnu/)?linux`)
)

// osNameMap is core.py's _OS_NAME_MAP: the first ten characters of a
// distribution name, lowercased without spaces, to the `os` grain.
var osNameMap = map[string]string{
	"redhatente": "RedHat", "gentoobase": "Gentoo", "archarm": "Arch ARM",
	"arch": "Arch", "debian": "Debian", "Junos": "Junos", "raspbian": "Raspbian",
	"fedoraremi": "Fedora", "chapeau": "Chapeau", "korora": "Korora",
	"amazonami": "Amazon", "alt": "ALT", "enterprise": "OEL", "oracleserv": "OEL",
	"cloudserve": "CloudLinux", "cloudlinux": "CloudLinux", "virtuozzo": "Virtuozzo",
	"almalinux": "AlmaLinux", "almalinuxk": "AlmaLinux", "pidora": "Fedora",
	"scientific": "ScientificLinux", "synology": "Synology", "nilrt": "NILinuxRT",
	"poky": "Poky", "manjaro": "Manjaro", "manjarolin": "Manjaro",
	"univention": "Univention", "antergos": "Antergos", "sles": "SUSE",
	"void": "Void", "slesexpand": "RES", "linuxmint": "Mint", "neon": "KDE neon",
	"pop": "Pop", "rocky": "Rocky", "alibabaclo": "Alinux", "mendel": "Mendel",
}

// idAndNameToOS is core.py's _ID_AND_NAME_TO_OS_NAME_MAP.
var idAndNameToOS = map[[2]string]string{
	{"astra", "Astra Linux (Orel)"}:     "AstraLinuxCE",
	{"astra", "Astra Linux (Smolensk)"}: "AstraLinuxSE",
	{"pop", "Pop!_OS"}:                  "Pop",
}

// osFamilyMap is core.py's _OS_FAMILY_MAP from `os` to `os_family`.
var osFamilyMap = map[string]string{
	"Ubuntu": "Debian", "Fedora": "RedHat", "Chapeau": "RedHat", "Korora": "RedHat",
	"FedBerry": "RedHat", "CentOS": "RedHat", "CentOS Stream": "RedHat", "GoOSe": "RedHat",
	"Scientific": "RedHat", "Amazon": "RedHat", "CloudLinux": "RedHat", "Virtuozzo": "RedHat",
	"AlmaLinux": "RedHat", "AlmaLinux Kitten": "RedHat", "OVS": "RedHat", "OEL": "RedHat",
	"XCP": "RedHat", "XCP-ng": "RedHat", "XenServer": "RedHat", "RES": "RedHat",
	"Sangoma": "RedHat", "VMware Photon OS": "RedHat", "Mandrake": "Mandriva", "Mint": "Debian",
	"VMwareESX": "VMware", "Bluewhite64": "Bluewhite", "Slamd64": "Slackware", "SLES": "Suse",
	"SUSE Enterprise Server": "Suse", "SUSE  Enterprise Server": "Suse", "SLED": "Suse",
	"openSUSE": "Suse", "SUSE": "Suse", "openSUSE Leap": "Suse", "openSUSE Tumbleweed": "Suse",
	"SLES_SAP": "Suse", "Arch ARM": "Arch", "Manjaro": "Arch", "Manjaro ARM": "Arch",
	"Antergos": "Arch", "EndeavourOS": "Arch", "ALT": "RedHat", "Trisquel": "Debian",
	"GCEL": "Debian", "Linaro": "Debian", "elementary OS": "Debian", "elementary": "Debian",
	"Univention": "Debian", "ScientificLinux": "RedHat", "Raspbian": "Debian", "Devuan": "Debian",
	"antiX": "Debian", "Kali": "Debian", "Parrot OS": "Debian", "neon": "Debian",
	"Cumulus": "Debian", "Deepin": "Debian", "NILinuxRT": "NILinuxRT", "KDE neon": "Debian",
	"Void": "Void", "IDMS": "Debian", "Funtoo": "Gentoo", "TurnKey": "Debian", "Pop": "Debian",
	"Rocky": "RedHat", "AstraLinuxCE": "Debian", "AstraLinuxSE": "Debian", "Alinux": "RedHat",
	"Mendel": "Debian", "OSMC": "Debian", "openEuler": "RedHat",
}

// deriveOS is core.py's _derive_os_grain.
func deriveOS(fullname, id string) string {
	if os, ok := idAndNameToOS[[2]string{id, fullname}]; ok {
		return os
	}
	distro := strings.TrimSpace(replaceLinuxRE.ReplaceAllString(fullname, ""))
	short := strings.ToLower(strings.ReplaceAll(distro, " ", ""))
	if len(short) > 10 {
		short = short[:10]
	}
	if os, ok := osNameMap[short]; ok {
		return os
	}
	return distro
}

// osData derives os, os_family, osfullname, osrelease, oscodename and
// lsb_distrib_* from os-release and lsb-release text. It follows the
// path Salt 3006's onedir build takes, where the lsb_release Python
// module is missing and the legacy heuristics run after the os-release
// pass (core.py _linux_distribution_data and
// _legacy_linux_distribution_data).
func osData(osRelease, lsbRelease string) map[string]any {
	rel := parseOSRelease(osRelease)
	g := map[string]any{}
	lsb := parseLSBRelease(lsbRelease)
	for k, v := range lsb {
		g[k] = v
	}
	if rel["ID"] != "" || rel["NAME"] != "" {
		g["os"] = deriveOS(rel["NAME"], rel["ID"])
		g["osfullname"] = strings.TrimSpace(rel["NAME"])
		if c := rel["VERSION_CODENAME"]; c != "" {
			g["oscodename"] = c
		} else if c := codenameQuirk(rel); c != "" {
			g["oscodename"] = c
		}
		if _, ok := lsb["lsb_distrib_id"]; !ok {
			legacyFromOSRelease(g, rel)
		}
	}
	fullname, _ := g["osfullname"].(string)
	if fullname == "" {
		fullname = strings.TrimSpace(str(g["lsb_distrib_id"]))
		if fullname == "" {
			fullname = rel["ID"]
		}
		g["osfullname"] = fullname
	}
	osrelease := strings.TrimSpace(str(g["lsb_distrib_release"]))
	if osrelease == "" {
		osrelease = rel["VERSION_ID"]
	}
	g["osrelease"] = osrelease
	osName, _ := g["os"].(string)
	if osName == "" {
		osName = deriveOS(fullname, "")
		g["os"] = osName
	}
	if cn := str(g["lsb_distrib_codename"]); cn != "" && (strings.Contains(osName, "Rocky") || strings.Contains(osName, "AlmaLinux") || strings.Contains(osName, "AstraLinuxSE")) {
		if _, after, ok := strings.Cut(cn, "("); ok {
			inner, _, _ := strings.Cut(after, ")")
			if osName == "AstraLinuxSE" {
				inner = strings.ToLower(strings.Fields(inner + " x")[0])
			}
			g["lsb_distrib_codename"] = inner
		}
	}
	codename := strings.TrimSpace(str(g["lsb_distrib_codename"]))
	if codename == "" || strings.Contains(codename, "Red Hat") {
		codename = rel["VERSION_CODENAME"]
	}
	g["oscodename"] = codename
	if fam, ok := osFamilyMap[osName]; ok {
		g["os_family"] = fam
	} else {
		g["os_family"] = osName
	}
	return g
}

// legacyFromOSRelease fills lsb_distrib_* from os-release when no
// lsb-release file named the distribution.
func legacyFromOSRelease(g map[string]any, rel map[string]string) {
	if n, ok := rel["NAME"]; ok {
		g["lsb_distrib_id"] = strings.TrimSpace(n)
	}
	if v, ok := rel["VERSION_ID"]; ok {
		g["lsb_distrib_release"] = v
	}
	if c, ok := rel["VERSION_CODENAME"]; ok {
		g["lsb_distrib_codename"] = c
	} else if p, ok := rel["PRETTY_NAME"]; ok {
		g["lsb_distrib_codename"] = p
	}
	if rel["ID"] == "mendel" {
		if f := strings.Fields(rel["PRETTY_NAME"]); len(f) >= 3 {
			g["lsb_distrib_release"] = f[2]
		}
	}
	if cpe := strings.Split(rel["CPE_NAME"], ":"); len(cpe) > 4 && cpe[0] == "cpe" {
		vendor := ""
		if strings.HasPrefix(cpe[1], "/") {
			vendor = cpe[2]
		} else if cpe[1] == "2.3" {
			vendor = cpe[3]
		}
		if v := strings.ToLower(vendor); v == "suse" || v == "opensuse" {
			g["os"] = "SUSE"
			switch {
			case rel["NAME"] == "openSUSE Leap":
				g["osfullname"] = "Leap"
			case rel["VERSION"] == "Tumbleweed":
				g["osfullname"] = "Tumbleweed"
			}
		}
	}
}

func codenameQuirk(rel map[string]string) string {
	switch rel["ID"] {
	case "astra":
		return rel["VARIANT_ID"]
	case "almalinux", "rocky":
		if m := versionRE.FindStringSubmatch(rel["VERSION"]); m != nil {
			return m[1]
		}
	}
	return ""
}

// osReleaseData is core.py's _osrelease_data: osrelease_info (numeric
// parts as ints), osmajorrelease and osfinger.
func osReleaseData(osName, fullname, osrelease string) map[string]any {
	g := map[string]any{}
	parts := strings.Split(osrelease, ".")
	info := make([]any, len(parts))
	for i, p := range parts {
		if n, err := strconv.Atoi(p); err == nil && isDigits(p) {
			info[i] = n
		} else {
			info[i] = p
		}
	}
	g["osrelease_info"] = info
	if n, ok := info[0].(int); ok {
		g["osmajorrelease"] = n
	}
	name := fullname
	switch osName {
	case "Debian", "FreeBSD", "OpenBSD", "NetBSD", "Mac", "Raspbian", "AlmaLinux":
		name = osName
	}
	ver := partString(info[0])
	switch osName {
	case "Ubuntu", "Pop", "NixOS":
		ver = osrelease
	}
	g["osfinger"] = name + "-" + ver
	return g
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

func partString(v any) string {
	if n, ok := v.(int); ok {
		return strconv.Itoa(n)
	}
	return str(v)
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// osArch is the osarch grain: dpkg's architecture name on Debian (what
// `dpkg --print-architecture` prints), rpm's host CPU on RedHat and Suse,
// otherwise the CPU architecture (core.py _osarch).
func osArch(osFamily, cpuarch string) string {
	if osFamily != "Debian" {
		return cpuarch
	}
	switch cpuarch {
	case "x86_64":
		return "amd64"
	case "aarch64":
		return "arm64"
	case "i386", "i486", "i586", "i686":
		return "i386"
	case "armv7l", "armv6l":
		return "armhf"
	case "ppc64le":
		return "ppc64el"
	case "mips64":
		return "mips64el"
	case "riscv64", "s390x":
		return cpuarch
	}
	return cpuarch
}
