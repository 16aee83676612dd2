package run_test

import (
	"context"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
)

// TestUmaskKeyword runs a command under a state's umask keyword: octal
// strings, the YAML integer a leading zero gives (0022 reads as 22 and
// means 0o22), and an invalid value, which fails the state as
// verify_data does. The process umask is back afterwards.
func TestUmaskKeyword(t *testing.T) {
	before := syscall.Umask(0o022)
	syscall.Umask(before)
	sls := `strict:
  cmd.run:
    - name: umask
    - umask: '077'
leading_zero:
  cmd.run:
    - name: umask
    - umask: 0027
bad:
  cmd.run:
    - name: umask
    - umask: 999
`
	res, err := runner(false).CallHigh(context.Background(), high(t, sls))
	if err != nil {
		t.Fatalf("CallHigh: %v", err)
	}
	var got []string
	res.Map().Range(func(k, v any) bool {
		m := v.(*ordered.Map)
		out := ordered.KeyString(m.Value("comment"))
		if ch, ok := m.Value("changes").(*ordered.Map); ok && ch.Has("stdout") {
			out = ordered.KeyString(ch.Value("stdout"))
		}
		got = append(got, ordered.KeyString(m.Value("__id__"))+" "+out)
		return true
	})
	// A chunk failing verify_data has no __id__ in its return, as in Salt.
	want := []string{"strict 0077", "leading_zero 0027", "None Invalid umask: 999\n"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	after := syscall.Umask(before)
	if after != before {
		t.Errorf("process umask after the run = %o, want %o", after, before)
	}
}
