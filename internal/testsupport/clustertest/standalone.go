package clustertest

import (
	"fmt"
	"os"
)

// Standalone is a T for programs (benchmarks) that run a cluster
// outside go test: Fatal panics with the message, Close runs the
// cleanups in reverse order.
type Standalone struct {
	// Prefix names the temporary directories.
	Prefix   string
	cleanups []func()
	failed   bool
}

// Helper does nothing outside go test.
func (s *Standalone) Helper() {}

// Logf writes to stderr.
func (s *Standalone) Logf(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...) }

// Cleanup registers f for Close.
func (s *Standalone) Cleanup(f func()) { s.cleanups = append(s.cleanups, f) }

// Failed reports whether Fatal was called.
func (s *Standalone) Failed() bool { return s.failed }

// Fatal marks the run failed and panics with the message.
func (s *Standalone) Fatal(a ...any) { s.failed = true; panic(fmt.Sprint(a...)) }

// Fatalf is Fatal with a format.
func (s *Standalone) Fatalf(f string, a ...any) { s.failed = true; panic(fmt.Sprintf(f, a...)) }

// TempDir makes a directory removed by Close.
func (s *Standalone) TempDir() string {
	d, err := os.MkdirTemp("", s.Prefix)
	if err != nil {
		s.Fatal(err)
	}
	s.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// Close runs the cleanups, last first.
func (s *Standalone) Close() {
	for i := len(s.cleanups) - 1; i >= 0; i-- {
		s.cleanups[i]()
	}
	s.cleanups = nil
}
