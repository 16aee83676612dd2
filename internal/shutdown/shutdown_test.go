package shutdown

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// In a child process (BRINE_SHUTDOWN_CHILD=1): wait for the first signal,
// report it, then block until the second one ends the process.
func TestMain(m *testing.M) {
	if os.Getenv("BRINE_SHUTDOWN_CHILD") == "1" {
		ctx, _ := Context(os.Stderr, "first signal")
		<-ctx.Done()
		os.Stdout.WriteString(context.Cause(ctx).Error() + "\n")
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestFirstCancelsSecondExits130(t *testing.T) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "BRINE_SHUTDOWN_CHILD=1")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // let the child install its handler
	cmd.Process.Signal(syscall.SIGINT)
	line, _ := bufio.NewReader(stdout).ReadString('\n') // the child saw the first signal
	cmd.Process.Signal(syscall.SIGTERM)
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Errorf("exit = %v, want 130", err)
	}
	if line != "interrupted\n" || errb.String() != "first signal\n" {
		t.Errorf("stdout %q, stderr %q", line, errb.String())
	}
}

func TestStopWithoutSignal(t *testing.T) {
	ctx, stop := Context(nil, "")
	stop()
	if !errors.Is(context.Cause(ctx), context.Canceled) {
		t.Errorf("cause after stop = %v", context.Cause(ctx))
	}
}
