package jid

import (
	"testing"
	"time"
)

func TestFormatAndUnique(t *testing.T) {
	at := time.Date(2026, 12, 1, 1, 2, 3, 4005000, time.UTC)
	if got, want := Format(at), "20261201010203004005"; got != want {
		t.Errorf("Format = %s, want %s", got, want)
	}
	a, b := New(at), New(at)
	if len(a) != 20 || a >= b {
		t.Errorf("JIDs not increasing 20-digit strings: %s, %s", a, b)
	}
}
