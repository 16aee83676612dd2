package coregrains

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// gpuClasses are the PCI class codes lspci names "VGA compatible
// controller", "3D controller", "Display controller" and "Processing
// accelerators" (core.py _linux_gpu_data's gpu_classes).
var gpuClasses = []string{"0x0300", "0x0302", "0x0380", "0x1200"}

var knownVendors = []string{"nvidia", "amd", "ati", "intel", "cirrus logic", "vmware", "matrox", "aspeed"}

var nonAlnum = regexp.MustCompile(`[^A-Za-z0-9]`)

// gpuData reads PCI devices from sysfs and names them from pci.ids, in
// place of parsing `lspci -vmm`. Like Salt it reports nothing when
// lspci is not installed or enable_lspci / enable_gpu_grains is off.
func (o GatherOptions) gpuData() (int, []any) {
	if !o.optBool("enable_lspci", true) || !o.optBool("enable_gpu_grains", true) {
		return 0, []any{}
	}
	if _, err := exec.LookPath("lspci"); err != nil {
		return 0, []any{}
	}
	devs, _ := filepath.Glob(o.path("/sys/bus/pci/devices/*"))
	sort.Strings(devs)
	var ids *pciIDs
	gpus := []any{}
	for _, d := range devs {
		class := readHex(filepath.Join(d, "class"))
		if len(class) < 6 || !isGPUClass(class[:6]) {
			continue
		}
		if ids == nil {
			ids = o.loadPCIIDs()
		}
		vendorName, model := ids.lookup(readHex(filepath.Join(d, "vendor")), readHex(filepath.Join(d, "device")))
		vendor := "unknown"
		words := nonAlnum.Split(strings.ToLower(vendorName), -1)
		for _, k := range knownVendors {
			if has(words, k) {
				vendor = k
				break
			}
		}
		gpus = append(gpus, map[string]any{"vendor": vendor, "model": model})
	}
	return len(gpus), gpus
}

func isGPUClass(c string) bool {
	for _, g := range gpuClasses {
		if c == g {
			return true
		}
	}
	return false
}

func readHex(p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		return ""
	}
	return strings.ToLower(strings.TrimSpace(string(b)))
}

type pciIDs struct {
	vendors map[string]string
	devices map[string]string // "vvvv:dddd"
}

func (o GatherOptions) loadPCIIDs() *pciIDs {
	ids := &pciIDs{vendors: map[string]string{}, devices: map[string]string{}}
	for _, p := range []string{"/usr/share/misc/pci.ids", "/usr/share/hwdata/pci.ids", "/usr/share/pci.ids"} {
		text, err := o.readFile(p)
		if err != nil {
			continue
		}
		vendor := ""
		for _, line := range strings.Split(text, "\n") {
			switch {
			case line == "" || line[0] == '#':
			case strings.HasPrefix(line, "C "):
				vendor = ""
			case line[0] != '\t' && len(line) > 6:
				vendor = line[:4]
				ids.vendors[vendor] = strings.TrimSpace(line[4:])
			case vendor != "" && len(line) > 7 && line[1] != '\t':
				ids.devices[vendor+":"+line[1:5]] = strings.TrimSpace(line[5:])
			}
		}
		break
	}
	return ids
}

// lookup names a device as lspci -vmm does, falling back to the hex ids.
func (p *pciIDs) lookup(vendor, device string) (string, string) {
	v, d := strings.TrimPrefix(vendor, "0x"), strings.TrimPrefix(device, "0x")
	vn, ok := p.vendors[v]
	if !ok {
		vn = "Device " + v
	}
	dn, ok := p.devices[v+":"+d]
	if !ok {
		dn = "Device " + d
	}
	return vn, dn
}
