package syscmd

import (
	"context"
	"errors"
	"os/exec"
	"testing"
)

func TestExec(t *testing.T) {
	ctx := context.Background()
	r, err := Exec(ctx, Cmd{Args: []string{"sh", "-c", `echo "$X $LC_ALL"; echo err >&2; exit 3`}, Env: []string{"X=1"}})
	if err != nil || r.Retcode != 3 || r.Stdout != "1 C" || r.Stderr != "err" {
		t.Errorf("Exec = %+v, %v", r, err)
	}
	r, err = Exec(ctx, Cmd{Args: []string{"cat"}, Stdin: "in"})
	if err != nil || r.Stdout != "in" {
		t.Errorf("stdin: %+v %v", r, err)
	}
	if _, err := Exec(ctx, Cmd{Args: []string{"/nonexistent/brine-tool"}}); err == nil {
		t.Error("a missing tool must be an error")
	}
	if _, err := Exec(ctx, Cmd{}); err == nil {
		t.Error("an empty command must be an error")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := Exec(cctx, Cmd{Args: []string{"sleep", "5"}}); err == nil || !errors.Is(err, context.Canceled) && !isExit(err) {
		t.Errorf("cancelled: %v", err)
	}
	if Which("sh") == "" || Which("brine-no-such-tool") != "" {
		t.Error("Which")
	}
	if got := (Cmd{Args: []string{"a", "b"}, Env: []string{"K=V"}}).String(); got != "K=V a b" {
		t.Errorf("String = %q", got)
	}
}

func isExit(err error) bool {
	var e *exec.ExitError
	return errors.As(err, &e)
}
