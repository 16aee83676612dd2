package shell

import (
	"context"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
)

func TestRun(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		spec Spec
		want Output
	}{
		{"stdout and stderr are right-stripped", Spec{Cmd: "printf 'a\\n\\n'; printf 'e \\n' >&2"}, Output{Stdout: "a", Stderr: "e"}},
		{"exit status", Spec{Cmd: "exit 4"}, Output{Retcode: 4}},
		{"success retcodes", Spec{Cmd: "exit 4", SuccessRetcodes: []int{4}}, Output{}},
		{"env mapping and list", Spec{Cmd: "echo $A$B", Env: []any{ordered.FromPairs("A", "x"), ordered.FromPairs("B", 1)}}, Output{Stdout: "x1"}},
		{"cwd", Spec{Cmd: "pwd", Cwd: "/"}, Output{Stdout: "/"}},
		{"timeout", Spec{Cmd: "sleep 5", Timeout: 100 * time.Millisecond}, Output{Retcode: 1, Stdout: "Timed out after 0.1 seconds"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Run(ctx, tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			got.PID = 0
			if got != tc.want {
				t.Errorf("Run = %+v, want %+v", got, tc.want)
			}
		})
	}
	if _, err := Run(ctx, Spec{Cmd: "true", Env: "not-a-mapping"}); err == nil {
		t.Error("a string env must be rejected")
	}
}
