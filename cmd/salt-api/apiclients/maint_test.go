package apiclients

import (
	"errors"
	"fmt"
	"os"
	"slices"
)

// mainT is the clustertest.T of TestMain: the shared environment lives
// for the whole test binary, not for one test. Fatal ends setup (run
// turns it into an error); Cleanup functions run, last first, when
// TestMain ends; logs are printed when setup or any test failed.
type mainT struct {
	cleanups []func()
	dirs     []string
	logs     []string
	failed   bool
}

// errFatal carries a Fatal out of setup.
type errFatal struct{ msg string }

func (*mainT) Helper() {}

func (m *mainT) Fatal(args ...any) { m.fail(fmt.Sprint(args...)) }

func (m *mainT) Fatalf(format string, args ...any) { m.fail(fmt.Sprintf(format, args...)) }

func (m *mainT) fail(msg string) {
	m.failed = true
	panic(errFatal{msg})
}

func (m *mainT) Logf(format string, args ...any) {
	m.logs = append(m.logs, fmt.Sprintf(format, args...))
}

func (m *mainT) TempDir() string {
	d, err := os.MkdirTemp("", "apiclients")
	if err != nil {
		m.Fatal(err)
	}
	m.dirs = append(m.dirs, d)
	return d
}

func (m *mainT) Cleanup(f func()) { m.cleanups = append(m.cleanups, f) }

func (m *mainT) Failed() bool { return m.failed }

// run calls f, turning a Fatal inside it into an error.
func (m *mainT) run(f func()) (err error) {
	defer func() {
		if p := recover(); p != nil {
			ef, ok := p.(errFatal)
			if !ok {
				panic(p)
			}
			err = errors.New(ef.msg)
		}
	}()
	f()
	return nil
}

// cleanup runs the cleanups, prints the logs if anything failed, and
// removes the temporary directories.
func (m *mainT) cleanup(testsFailed bool) {
	m.failed = m.failed || testsFailed
	for _, f := range slices.Backward(m.cleanups) {
		f()
	}
	if m.failed {
		for _, l := range m.logs {
			fmt.Fprintln(os.Stderr, l)
		}
	}
	for _, d := range m.dirs {
		os.RemoveAll(d)
	}
}
