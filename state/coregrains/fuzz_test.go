package coregrains

import "testing"

func FuzzOSData(f *testing.F) {
	f.Add("NAME=\"Debian GNU/Linux\"\nID=debian\nVERSION_ID=\"12\"\n", "")
	f.Add("NAME=\"Rocky Linux\"\nID=\"rocky\"\nVERSION=\"9.3 (Blue Onyx)\"\nCPE_NAME=\"cpe:/o:rocky:rocky:9::baseos\"\n", "")
	f.Add("", "DISTRIB_ID=Ubuntu\nDISTRIB_CODENAME='(x'\n")
	f.Fuzz(func(t *testing.T, osRelease, lsb string) {
		g := osData(osRelease, lsb)
		if _, ok := g["os_family"].(string); !ok {
			t.Fatalf("os_family missing: %v", g)
		}
		if rel, _ := g["osrelease"].(string); rel != "" {
			osReleaseData(str(g["os"]), str(g["osfullname"]), rel)
		}
	})
}

func FuzzKernelParams(f *testing.F) {
	f.Add(`BOOT_IMAGE=/vmlinuz root=UUID=x ro console="ttyS0,115200" a\ b`)
	f.Fuzz(func(t *testing.T, s string) {
		kernelParams(s)
		parseResolv(s)
	})
}
