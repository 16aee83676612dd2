package coregrains

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/windows"
	"golang.org/x/sys/windows/registry"

	"github.com/brinesalt/brine/internal/winsession"
)

// gatherCore is core.py os_data for Windows, from the registry and the
// Win32 APIs instead of WMI (no wmic, no COM): what Salt reads from
// Win32_OperatingSystem comes from HKLM\...\Windows NT\CurrentVersion
// and RtlGetVersion, Win32_ComputerSystem and Win32_BIOS from
// HKLM\HARDWARE\DESCRIPTION\System\BIOS and the SMBIOS table,
// Win32_TimeZone from the time zone keys, the domain from
// NetGetJoinInformation, memory from GlobalMemoryStatusEx.
func gatherCore(ctx context.Context, o GatherOptions) (map[string]any, error) {
	r := &result{m: make(map[string]any, 96)}
	tasks := []func(){
		func() { r.set(windowsPlatform()) },
		func() { r.set(windowsHardware()) },
		func() { r.set(o.netGrains(ctx)) },
		func() { r.set(o.processGrains()) },
		func() { r.set(windowsCPUMem()) },
	}
	var wg sync.WaitGroup
	for _, t := range tasks {
		wg.Add(1)
		go func() { defer wg.Done(); t() }()
	}
	wg.Wait()
	g := r.m
	g["os"], g["os_family"], g["kernel"] = "Windows", "Windows", "Windows"
	g["num_gpus"], g["gpus"] = 0, []any{}
	g["init"] = "Windows"
	g["ps"] = "tasklist.exe"
	for k, v := range windowsVirtual(str(g["manufacturer"]), str(g["productname"]), str(g["biosstring"])) {
		g[k] = v
	}
	rel := str(g["osrelease"])
	g["osrelease_info"] = windowsOSReleaseInfo(rel)
	g["osfinger"] = "Windows-" + rel
	// minion_mode is Brine's: service when the SCM started the minion,
	// session when it runs in a user's logon session (docs/WINDOWS.md).
	g["minion_mode"] = winsession.Mode()
	return g, nil
}

const ntCurrentVersion = `SOFTWARE\Microsoft\Windows NT\CurrentVersion`

func regString(root registry.Key, path, name string) string {
	k, err := registry.OpenKey(root, path, registry.QUERY_VALUE|registry.WOW64_64KEY)
	if err != nil {
		return ""
	}
	defer k.Close()
	s, _, err := k.GetStringValue(name)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(s)
}

// windowsPlatform is the operating system part of
// _windows_platform_data: platform.uname's fields, the caption and
// version, the release grain, the service pack, the time zone and the
// domain.
func windowsPlatform() map[string]any {
	v := windows.RtlGetVersion()
	version := fmt.Sprintf("%d.%d.%d", v.MajorVersion, v.MinorVersion, v.BuildNumber)
	caption := windowsCaption(v)
	server := v.ProductType != 1 // VER_NT_WORKSTATION
	host, _ := os.Hostname()
	g := map[string]any{
		"nodename":       host,
		"kernelrelease":  version,
		"kernelversion":  version,
		"osversion":      version,
		"osfullname":     caption,
		"osmanufacturer": "Microsoft Corporation",
		"osrelease":      windowsOSRelease(caption, server, platformRelease(v)),
		"cpuarch":        map[string]string{"amd64": "AMD64", "arm64": "ARM64", "386": "x86"}[runtime.GOARCH],
		"osservicepack":  nil,
		"timezone":       windowsTimezone(),
	}
	if v.ServicePackMajor > 0 {
		g["osservicepack"] = "SP" + strconv.Itoa(int(v.ServicePackMajor))
	}
	g["windowsdomain"], g["windowsdomaintype"] = joinInfo()
	return g
}

// windowsCaption is Win32_OperatingSystem.Caption: "Microsoft " and the
// registry's ProductName, whose "Windows 10" Windows 11 still carries
// (build 22000 and later are Windows 11, as WMI's caption says).
func windowsCaption(v *windows.OsVersionInfoEx) string {
	name := regString(registry.LOCAL_MACHINE, ntCurrentVersion, "ProductName")
	if name == "" {
		return ""
	}
	if v.MajorVersion == 10 && v.BuildNumber >= 22000 && v.ProductType == 1 {
		name = strings.Replace(name, "Windows 10", "Windows 11", 1)
	}
	if strings.HasPrefix(name, "Microsoft ") {
		return name
	}
	return "Microsoft " + name
}

// platformRelease is Python's platform.release() on Windows.
func platformRelease(v *windows.OsVersionInfoEx) string {
	switch {
	case v.MajorVersion == 6 && v.MinorVersion == 0:
		return "Vista"
	case v.MajorVersion == 6 && v.MinorVersion == 1:
		return "7"
	case v.MajorVersion == 6 && v.MinorVersion == 2:
		return "8"
	case v.MajorVersion == 6 && v.MinorVersion == 3:
		return "8.1"
	case v.MajorVersion == 10 && v.BuildNumber >= 22000:
		return "11"
	}
	return strconv.Itoa(int(v.MajorVersion))
}

// windowsTimezone is Win32_TimeZone.Description: the Display value of
// the active time zone's key ("(UTC+01:00) Amsterdam, Berlin, …").
func windowsTimezone() any {
	key := regString(registry.LOCAL_MACHINE, `SYSTEM\CurrentControlSet\Control\TimeZoneInformation`, "TimeZoneKeyName")
	if key == "" {
		return nil
	}
	if d := regString(registry.LOCAL_MACHINE, ntCurrentVersion+`\Time Zones\`+key, "Display"); d != "" {
		return d
	}
	return key
}

// joinInfo is salt.utils.win_osinfo.get_join_info.
func joinInfo() (any, any) {
	var name *uint16
	var status uint32
	if err := windows.NetGetJoinInformation(nil, &name, &status); err != nil {
		return nil, nil
	}
	defer windows.NetApiBufferFree((*byte)(unsafe.Pointer(name)))
	types := map[uint32]string{windows.NetSetupUnknownStatus: "Unknown", windows.NetSetupUnjoined: "Unjoined",
		windows.NetSetupWorkgroupName: "Workgroup", windows.NetSetupDomainName: "Domain"}
	return windows.UTF16PtrToString(name), types[status]
}

// windowsCPUMem is _windows_cpudata and _windows_memdata.
func windowsCPUMem() map[string]any {
	g := map[string]any{"mem_total": 0}
	if n, ok := os.LookupEnv("NUMBER_OF_PROCESSORS"); ok {
		c, err := strconv.Atoi(n)
		if err != nil {
			c = 1
		}
		g["num_cpus"] = c
	}
	if m := regString(registry.LOCAL_MACHINE, `HARDWARE\DESCRIPTION\System\CentralProcessor\0`, "ProcessorNameString"); m != "" {
		g["cpu_model"] = m
	} else {
		g["cpu_model"] = nil
	}
	var ms memoryStatusEx
	ms.Length = uint32(unsafe.Sizeof(ms))
	if r, _, _ := procGlobalMemoryStatusEx.Call(uintptr(unsafe.Pointer(&ms))); r != 0 {
		g["mem_total"] = int(ms.TotalPhys / (1024 * 1024))
	}
	return g
}

// memoryStatusEx is MEMORYSTATUSEX, which x/sys/windows does not wrap.
type memoryStatusEx struct {
	Length, MemoryLoad                    uint32
	TotalPhys, AvailPhys                  uint64
	TotalPageFile, AvailPageFile          uint64
	TotalVirtual, AvailVirtual, AvailExtd uint64
}

var (
	kernel32                   = windows.NewLazySystemDLL("kernel32.dll")
	procGetSystemFirmwareTable = kernel32.NewProc("GetSystemFirmwareTable")
	procGlobalMemoryStatusEx   = kernel32.NewProc("GlobalMemoryStatusEx")
)

// windowsHardware is the hardware part of _windows_platform_data:
// Win32_ComputerSystem's manufacturer and model and Win32_BIOS's version
// from the BIOS registry key, serial number, UUID and baseboard from the
// SMBIOS table where the firmware provides one.
func windowsHardware() map[string]any {
	const bios = `HARDWARE\DESCRIPTION\System\BIOS`
	g := map[string]any{
		"manufacturer": orNil(regString(registry.LOCAL_MACHINE, bios, "SystemManufacturer")),
		"productname":  orNil(regString(registry.LOCAL_MACHINE, bios, "SystemProductName")),
		"biosversion":  orNil(regString(registry.LOCAL_MACHINE, bios, "BIOSVersion")),
		"biosstring":   orNil(regString(registry.LOCAL_MACHINE, bios, "BIOSVendor")),
	}
	raw := firmwareTable()
	if raw == nil {
		return g
	}
	info, _ := parseSMBIOS(raw)
	if info.hasSystem {
		g["serialnumber"] = orNil(info.Serial)
		g["uuid"] = orNil(strings.ToLower(info.UUID))
	}
	if info.hasBoard {
		g["motherboard"] = map[string]any{"productname": orNil(info.BoardProduct), "serialnumber": orNil(info.BoardSerial)}
	}
	return g
}

// firmwareTable is GetSystemFirmwareTable('RSMB', 0): the raw SMBIOS
// data, nil when there is none.
func firmwareTable() []byte {
	if procGetSystemFirmwareTable.Find() != nil {
		return nil
	}
	const rsmb = 'R'<<24 | 'S'<<16 | 'M'<<8 | 'B'
	n, _, _ := procGetSystemFirmwareTable.Call(rsmb, 0, 0, 0)
	if n == 0 || n > 1<<20 {
		return nil
	}
	buf := make([]byte, n)
	got, _, _ := procGetSystemFirmwareTable.Call(rsmb, 0, uintptr(unsafe.Pointer(&buf[0])), n)
	if got == 0 || got > n {
		return nil
	}
	return buf[:got]
}

func orNil(s string) any {
	if s == "" {
		return nil
	}
	return s
}
