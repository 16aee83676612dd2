package status

import "testing"

func FuzzProcParsers(f *testing.F) {
	f.Add("cpu  1 2 3 4 5 6 7 8\nintr 1 2\n")
	f.Add("    lo: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n")
	f.Add("TcpExt: A B\nTcpExt: 1 2\n")
	f.Add("flags : a b\nx:y:z\n")
	f.Add("/dev/sda1 /a\\040b ext4 rw 0 0\n")
	f.Fuzz(func(t *testing.T, s string) {
		parseMeminfo(s)
		parseCPUInfo(s)
		parseCPUStats(s)
		parseDiskstats(s)
		parseVMStat(s)
		parseNetdev(s)
		parseNetstats(s)
		parsePs(s)
		parseW(s)
		parseMounts(s)
		_, _ = parseLoadavg(s)
	})
}
