package sshexec

import (
	"strings"
	"testing"
)

// FuzzParseDeployLine: whatever a host prints, parsing its deploy line
// never panics, and an accepted line names an architecture and a codec
// Brine knows.
func FuzzParseDeployLine(f *testing.F) {
	for _, s := range []string{"BRINE-DEPLOY Linux x86_64 zstd", "motd\nBRINE-DEPLOY Linux aarch64 gzip full wait\n",
		"BRINE-DEPLOY Linux x86_64 zstd need-full", "BRINE-DEPLOY Linux x86_64 zstd free=12 wait", "BRINE-DEPLOY", "BRINE-DEPLOY Linux", "BRINE-DEPLOY Darwin arm64"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, out string) {
		if !strings.Contains(out, deployMarker) {
			return
		}
		d, err := parseDeployLine(out)
		if err != nil {
			return
		}
		if d.arch == "" || (d.codec != CodecRaw && d.codec != CodecZstd && d.codec != CodecGzip) || d.freeKiB < 0 {
			t.Fatalf("parseDeployLine(%q) = %+v", out, d)
		}
	})
}

// FuzzDeployLineWriter: however a session's stdout is cut into writes,
// the writer finds the first waiting deploy line whole and gives back
// everything else byte for byte.
func FuzzDeployLineWriter(f *testing.F) {
	f.Add("chatter\nBRINE-DEPLOY Linux x86_64 zstd wait\n\x00BRINE1 {}", 7)
	f.Add("BRINE-DEPLOY Linux x86_64 zstd need-full\n", 3)
	f.Add("no newline BRINE-DEPLOY x wait", 1)
	f.Fuzz(func(t *testing.T, out string, cut int) {
		w := &deployLineWriter{line: make(chan string, 1)}
		if cut <= 0 {
			cut = 1
		}
		for i := 0; i < len(out); i += cut {
			w.Write([]byte(out[i:min(i+cut, len(out))]))
		}
		var want, wantLine string
		rest, found := out, false
		for rest != "" {
			line, after, ok := strings.Cut(rest, "\n")
			if !ok {
				want += rest
				break
			}
			if !found && strings.HasPrefix(line, deployMarker+" ") && strings.HasSuffix(line, " "+waitToken) {
				found, wantLine = true, line
			} else {
				want += line + "\n"
			}
			rest = after
		}
		select {
		case got := <-w.line:
			if !found || got != wantLine {
				t.Fatalf("deploy line %q, want %q (found %v)", got, wantLine, found)
			}
		default:
			if found {
				t.Fatalf("deploy line %q not found", wantLine)
			}
		}
		if got := w.output(); got != want {
			t.Fatalf("output %q, want %q", got, want)
		}
	})
}
