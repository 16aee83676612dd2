package eauthcli

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openPTY is a pseudo-terminal pair: the controlling side and the
// terminal a program reads.
func openPTY(t *testing.T) (ptm, pts *os.File) {
	t.Helper()
	ptm, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open a pseudo-terminal: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(ptm.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(ptm.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	pts, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pts.Close(); ptm.Close() })
	return ptm, pts
}

// On a terminal the password is read from it without echo, as getpass
// does, and the prompt goes to the terminal.
func TestGetpassOnATerminal(t *testing.T) {
	ptm, pts := openPTY(t)
	var seen bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		r := bufio.NewReader(ptm)
		prompt := make([]byte, len("password: "))
		if _, err := io.ReadFull(r, prompt); err != nil {
			return
		}
		seen.Write(prompt)
		// The prompt is written before ReadPassword turns echo off:
		// type only once it has.
		for {
			tio, err := unix.IoctlGetTermios(int(pts.Fd()), unix.TCGETS)
			if err != nil || tio.Lflag&unix.ECHO == 0 {
				break
			}
			time.Sleep(time.Millisecond)
		}
		fmt.Fprint(ptm, "tty secret\n")
		line, _ := r.ReadString('\n')
		seen.WriteString(line)
	}()
	var stderr bytes.Buffer
	tm := &Terminal{Stdin: bufio.NewReader(strings.NewReader("not this\n")), Stdout: io.Discard, Stderr: &stderr,
		OpenTTY: func() (*os.File, error) {
			fd, err := unix.Dup(int(pts.Fd()))
			return os.NewFile(uintptr(fd), pts.Name()), err
		}}
	pw, err := getpass(tm, "password: ")
	<-done
	if err != nil || pw != "tty secret" {
		t.Fatalf("getpass = %q, %v", pw, err)
	}
	if strings.Contains(seen.String(), "tty secret") || !strings.HasPrefix(seen.String(), "password: ") {
		t.Errorf("the terminal showed %q: want the prompt and no echo", seen.String())
	}
	if stderr.Len() != 0 {
		t.Errorf("stderr %q: no fallback warning on a terminal", stderr.String())
	}
}
