package daemon

import (
	"bytes"
	"strings"
	"testing"
)

func TestStart(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		dir     string
		code    int
		ok      bool
		out     string
		errText string
	}{
		{args: nil, dir: "/etc/salt", ok: true},
		{args: []string{"-c", "/srv/conf", "-l", "debug"}, dir: "/srv/conf", ok: true},
		{args: []string{"--config-dir=/x", "--log-level", "quiet"}, dir: "/x", ok: true},
		{args: []string{"-V"}, code: 0, out: "salt-minion (Brine)\n"},
		{args: []string{"--bogus"}, code: 2, errText: "unknown flag"},
		{args: []string{"-l", "loud"}, code: 2, errText: "loud"},
	} {
		var stdout, stderr bytes.Buffer
		dir, log, code, ok := Start("salt-minion", tc.args, &stdout, &stderr)
		if dir != tc.dir || code != tc.code || ok != tc.ok || (ok && log == nil) || stdout.String() != tc.out ||
			!strings.Contains(stderr.String(), tc.errText) {
			t.Errorf("%v: dir %q code %d ok %v out %q err %q", tc.args, dir, code, ok, stdout.String(), stderr.String())
		}
	}
}
