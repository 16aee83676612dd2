package coregrains

import (
	"encoding/binary"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWindowsOSRelease(t *testing.T) {
	cases := []struct {
		caption string
		server  bool
		rel     string
		want    string
	}{
		{"Microsoft Windows 10 Pro", false, "10", "10"},
		{"Microsoft Windows 11 Enterprise", false, "11", "11"},
		{"Microsoft Windows Server 2019 Standard", true, "10", "2019Server"},
		{"Microsoft Windows Server 2012 R2 Datacenter", true, "8.1", "2012ServerR2"},
		{"Microsoft Windows Server Standard", true, "10", "2019Server"},
		{"Microsoft Windows 7", false, "7", "7"},
		{"", true, "10", "2016Server"},
		{"", false, "10", "10"},
	}
	for _, c := range cases {
		if got := windowsOSRelease(c.caption, c.server, c.rel); got != c.want {
			t.Errorf("windowsOSRelease(%q) = %q, want %q", c.caption, got, c.want)
		}
	}
	if got := windowsOSReleaseInfo("2012ServerR2"); !cmp.Equal(got, []any{2012, 2}) {
		t.Errorf("osrelease_info 2012ServerR2 = %v", got)
	}
	if got := windowsOSReleaseInfo("8.1"); !cmp.Equal(got, []any{8, 1}) {
		t.Errorf("osrelease_info 8.1 = %v", got)
	}
}

func TestWindowsVirtual(t *testing.T) {
	if g := windowsVirtual("QEMU", "Standard PC", ""); g["virtual"] != "kvm" {
		t.Errorf("QEMU: %v", g)
	}
	if g := windowsVirtual("innotek GmbH", "VirtualBox", ""); g["virtual"] != "VirtualBox" {
		t.Errorf("VirtualBox: %v", g)
	}
	if g := windowsVirtual("Dell Inc.", "OptiPlex", "DELL"); g["virtual"] != "physical" {
		t.Errorf("physical: %v", g)
	}
}

// smbiosTable builds RSMB data with a type 1 and a type 2 structure.
func smbiosTable() []byte {
	t1 := []byte{1, 27, 0, 0, 1, 2, 3, 4}
	t1 = append(t1, []byte{0x33, 0x22, 0x11, 0x00, 0x55, 0x44, 0x77, 0x66, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff}...)
	t1 = append(t1, 6, 0, 0)
	t1 = append(t1, []byte("Maker\x00Box\x00v1\x00SER-1\x00\x00")...)
	t2 := []byte{2, 8, 1, 0, 1, 2, 0, 3}
	t2 = append(t2, []byte("Maker\x00Board X\x00BSER\x00\x00")...)
	end := []byte{127, 4, 2, 0, 0, 0}
	table := append(append(t1, t2...), end...)
	hdr := make([]byte, 8)
	binary.LittleEndian.PutUint32(hdr[4:], uint32(len(table)))
	return append(hdr, table...)
}

func TestParseSMBIOS(t *testing.T) {
	info, err := parseSMBIOS(smbiosTable())
	if err != nil {
		t.Fatal(err)
	}
	want := smbiosInfo{Serial: "SER-1", UUID: "00112233-4455-6677-8899-aabbccddeeff",
		BoardProduct: "Board X", BoardSerial: "BSER", hasSystem: true, hasBoard: true}
	if diff := cmp.Diff(want, info, cmp.AllowUnexported(smbiosInfo{})); diff != "" {
		t.Errorf("parseSMBIOS (-want +got):\n%s", diff)
	}
	if _, err := parseSMBIOS([]byte{1, 2}); err == nil {
		t.Error("short data: no error")
	}
}

func FuzzParseSMBIOS(f *testing.F) {
	f.Add(smbiosTable())
	f.Add([]byte{0, 0, 0, 0, 4, 0, 0, 0, 1, 2, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = parseSMBIOS(b) })
}
