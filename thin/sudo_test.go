package thin_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brinesalt/brine/thin"
	"github.com/brinesalt/brine/thin/frame"
)

// fakeSudo is a sudo that keeps the whole environment for its command
// (sudoers' !env_reset) and asks for the password in FAKE_SUDO_DIR/password
// when FAKE_SUDO_NEED=1: on stderr with -S, through SUDO_ASKPASS with -A,
// refusing with -n; it logs every attempt it read to FAKE_SUDO_DIR/attempts
// and gives up after three, as sudo does.
const fakeSudo = `#!/bin/sh
mode=n; prompt=
while [ $# -gt 0 ]; do
	case "$1" in
	-n) mode=n;; -S) mode=S;; -A) mode=A;;
	-p) prompt=$2; shift;;
	-u) shift;;
	--) shift; break;;
	esac
	shift
done
if [ "$FAKE_SUDO_NEED" = 1 ]; then
	tries=0
	while :; do
		case $mode in
		n) echo "sudo: a password is required" >&2; exit 1;;
		S) printf '%s' "$prompt" >&2
		   IFS= read -r pw || { echo "sudo: no password was provided" >&2; echo "sudo: $tries incorrect password attempt" >&2; exit 1; };;
		A) pw=$("$SUDO_ASKPASS" "$prompt");;
		esac
		printf '%s\n' "$pw" >>"$FAKE_SUDO_DIR/attempts"
		[ "$pw" = "$(cat "$FAKE_SUDO_DIR/password")" ] && break
		tries=$((tries+1))
		echo "Sorry, try again." >&2
		[ $tries -ge 3 ] && { echo "sudo: 3 incorrect password attempts" >&2; exit 1; }
	done
fi
exec "$@"
`

// withFakeSudo puts fakeSudo first on PATH with the given password and
// returns its directory.
func withFakeSudo(t *testing.T, need bool, password string) string {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "sudo"), []byte(fakeSudo), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "password"), []byte(password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("FAKE_SUDO_DIR", dir)
	t.Setenv("FAKE_SUDO_NEED", map[bool]string{true: "1", false: "0"}[need])
	t.Setenv(asThinEnv, "1")
	return dir
}

// TestSudoPasswordNeverInherited: with a sudo that keeps the environment,
// the job and its children never see the password, in their environment
// or on their stdin, whether sudo asks for it, does not need it, or
// refuses it; sudo gets one attempt and never the job as another.
func TestSudoPasswordNeverInherited(t *testing.T) {
	const password = "thin-sudo-test-s3cret-91c4e7"
	job := `{"fun":"cmd.run","arg":["env; cat /proc/*/environ 2>/dev/null; echo; cat; echo job-ran"]}` + "\n"
	tests := []struct {
		name         string
		need         bool
		sudoPassword string
		wantAttempts string
		wantCode     int
	}{
		{"password asked", true, password, password + "\n", 0},
		{"no password needed", false, password, "", 0},
		{"password refused", true, "another-password", password + "\n", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := withFakeSudo(t, tt.need, tt.sudoPassword)
			var stdout, stderr bytes.Buffer
			code := thin.Main(context.Background(), []string{"sudo", "--password", "--", "call"},
				strings.NewReader(password+"\n"+job), &stdout, &stderr)
			attempts, _ := os.ReadFile(filepath.Join(dir, "attempts"))
			if string(attempts) != tt.wantAttempts {
				t.Errorf("sudo read %q as passwords, want %q", attempts, tt.wantAttempts)
			}
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d\nstdout %s\nstderr %s", code, tt.wantCode, stdout.String(), stderr.String())
			}
			if strings.Contains(stdout.String()+stderr.String(), password) {
				t.Errorf("the password reached the job's output:\n%s\n%s", stdout.String(), stderr.String())
			}
			if strings.Contains(stderr.String(), "salt:sudo") || strings.Contains(stderr.String(), "brine:sudo") {
				t.Errorf("the conversation with sudo reached stderr: %q", stderr.String())
			}
			if tt.wantCode != 0 {
				if !strings.Contains(stderr.String(), "incorrect password attempt") {
					t.Errorf("stderr %q does not say the password was refused", stderr.String())
				}
				return
			}
			res, err := frame.DecodeResult(stdout.Bytes())
			if err != nil {
				t.Fatalf("decode %q: %v (stderr %q)", stdout.String(), err, stderr.String())
			}
			if out, _ := res.Return.(string); res.Retcode != 0 || !strings.HasSuffix(out, "job-ran") {
				t.Errorf("job result %d %v", res.Retcode, res.Return)
			}
		})
	}
}

// TestMainScrubsLegacyPasswordVariable: a password variable of an
// earlier version never reaches the job's children.
func TestMainScrubsLegacyPasswordVariable(t *testing.T) {
	t.Setenv("BRINE_SUDO_PASSWORD", "legacy-s3cret")
	t.Setenv("BRINE_ASKPASS", "1")
	res, code, _ := callJSON(t, `{"fun":"cmd.run","arg":["env"]}`)
	if out, _ := res.Return.(string); code != 0 || strings.Contains(out, "legacy-s3cret") || strings.Contains(out, "BRINE_ASKPASS") {
		t.Errorf("exit %d, job environment:\n%s", code, out)
	}
}
