//go:build !windows

package cmd

import (
	"testing"

	"github.com/brinesalt/brine/internal/testsupport/testhosts"
)

func TestRunas(t *testing.T) {
	testhosts.RequireRoot(t, "runas")
	got, _ := call(t, "cmd.run", []any{"id -un; echo $HOME $USER"}, job("runas", "nobody"))
	u, err := lookupRunas("nobody", "", "")
	if err != nil {
		t.Fatal(err)
	}
	if want := "nobody\n" + u.home + " nobody"; got != want {
		t.Errorf("runas nobody = %q, want %q", got, want)
	}
}
