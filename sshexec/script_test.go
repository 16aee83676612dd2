package sshexec

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/brinesalt/brine/thin/frame"
)

// TestInstallEachCodec runs the install script with /bin/sh for every
// codec, as a host would after the upload, and checks that the binary
// lands under its final name and answers the job.
func TestInstallEachCodec(t *testing.T) {
	dir := buildThin(t)
	b, err := OpenBundle(dir, filepath.Join(t.TempDir(), "cache"))
	if err != nil {
		t.Fatal(err)
	}
	for _, codec := range []Codec{CodecZstd, CodecGzip, CodecRaw} {
		t.Run("codec="+string(codec), func(t *testing.T) {
			if u := codec.unpack(); u != "" {
				if _, err := exec.LookPath(strings.Fields(u)[0]); err != nil {
					t.Skipf("%s not installed here", u)
				}
			}
			payload, sum, err := b.Payload(runtime.GOARCH, codec)
			if err != nil {
				t.Fatal(err)
			}
			thinDir := filepath.Join(t.TempDir(), "thin")
			if err := os.Mkdir(thinDir, 0o700); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(payload)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(thinDir, "upload"), data, 0o600); err != nil {
				t.Fatal(err)
			}
			p := scriptParams{ThinDir: thinDir, Bin: b.BinName(), Umask: -1}
			cmd := exec.Command("/bin/sh", "-c", p.installScript("upload", codec, sum))
			cmd.Stdin = strings.NewReader(`{"fun":"test.ping","id":"h"}`)
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Run(); err != nil {
				t.Fatalf("install: %v\n%s", err, errb.String())
			}
			res, err := frame.DecodeResult(out.Bytes())
			if err != nil || res.Return != true {
				t.Fatalf("result %v, %v", res, err)
			}
			if bins := thinBinaries(t, thinDir); len(bins) != 1 || bins[0] != b.BinName() {
				t.Errorf("thin_dir holds %v", bins)
			}
		})
	}
}

func TestInstallRefusesWrongChecksum(t *testing.T) {
	dir := buildThin(t)
	b, err := OpenBundle(dir, filepath.Join(t.TempDir(), "cache"))
	if err != nil {
		t.Fatal(err)
	}
	payload, _, err := b.Payload(runtime.GOARCH, CodecRaw)
	if err != nil {
		t.Fatal(err)
	}
	thinDir := filepath.Join(t.TempDir(), "thin")
	os.Mkdir(thinDir, 0o700)
	data, _ := os.ReadFile(payload)
	os.WriteFile(filepath.Join(thinDir, "upload"), data, 0o600)
	p := scriptParams{ThinDir: thinDir, Bin: b.BinName(), Umask: -1}
	cmd := exec.Command("/bin/sh", "-c", p.installScript("upload", CodecRaw, strings.Repeat("0", 64)))
	var errb bytes.Buffer
	cmd.Stderr = &errb
	err = cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitThinChecksum {
		t.Fatalf("wrong checksum: err %v, stderr %s; want exit %d", err, errb.String(), exitThinChecksum)
	}
	if bins := thinBinaries(t, thinDir); len(bins) != 0 {
		t.Errorf("a binary with the wrong checksum was kept: %v", bins)
	}
}
