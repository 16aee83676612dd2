package sshexec

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/brinesalt/brine/internal/testsupport/testhosts"
	"github.com/brinesalt/brine/thin/frame"
)

// TestInstallEachCodec runs the install script with /bin/sh for every
// codec, as a host would after the upload, and checks that the binary
// lands under its final name and answers the job, also when thin_dir's
// path goes through a symlink (the binary sees its resolved path).
func TestInstallEachCodec(t *testing.T) {
	dir := buildThin(t)
	b, err := OpenBundle(dir, filepath.Join(t.TempDir(), "cache"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		codec   Codec
		symlink bool
	}{{CodecZstd, false}, {CodecGzip, false}, {CodecRaw, false}, {CodecZstd, true}, {CodecRaw, true}} {
		codec := tc.codec
		t.Run(fmt.Sprintf("codec=%s/symlink=%v", codec, tc.symlink), func(t *testing.T) {
			p, upload, sum := stageUpload(t, b, codec, nil)
			thinDir := p.ThinDir
			if tc.symlink {
				link := filepath.Join(t.TempDir(), "link")
				if err := os.Symlink(filepath.Dir(thinDir), link); err != nil {
					t.Fatal(err)
				}
				p.ThinDir = filepath.Join(link, filepath.Base(thinDir))
			}
			// A build being replaced, and another run's work file.
			for _, n := range []string{"salt-thin-0123456789abcdef", "salt-thin-0123456789abcdef.up-1.zst"} {
				if err := os.WriteFile(filepath.Join(thinDir, n), nil, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			installPing(t, p, upload, codec, sum)
			names := dirNames(t, thinDir)
			want := []string{b.BinName(), "salt-thin-0123456789abcdef.up-1.zst"}
			slices.Sort(want)
			if !slices.Equal(names, want) {
				t.Errorf("thin_dir holds %v, want %v (upload gone, other build gone, other run's file kept)", names, want)
			}
			if st, err := os.Stat(filepath.Join(thinDir, b.BinName())); err != nil || st.Mode().Perm() != 0o700 {
				t.Errorf("installed binary: %v, %v; want mode 0700", st, err)
			}
		})
	}
}

// installPing runs the install script for upload with /bin/sh, as a host
// would after the upload, on a test.ping job, and fails the test unless
// the job answers True.
func installPing(t *testing.T, p scriptParams, upload string, codec Codec, sum string) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", p.installScript(upload, codec, sum))
	cmd.Stdin = strings.NewReader(`{"fun":"test.ping","id":"h"}`)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("install: %v\n%s", err, errb.String())
	}
	if res, err := frame.DecodeResult(out.Bytes()); err != nil || res.Return != true {
		t.Fatalf("result %v, %v; stderr %s", res, err, errb.String())
	}
}

// TestInstallRefusesWrongChecksum: a binary whose sha256 is not the
// expected one is removed and never renamed into place, whatever the codec.
func TestInstallRefusesWrongChecksum(t *testing.T) {
	dir := buildThin(t)
	b, err := OpenBundle(dir, filepath.Join(t.TempDir(), "cache"))
	if err != nil {
		t.Fatal(err)
	}
	for _, codec := range []Codec{CodecZstd, CodecRaw} {
		t.Run("codec="+string(codec), func(t *testing.T) {
			p, upload, _ := stageUpload(t, b, codec, nil)
			cmd := exec.Command("/bin/sh", "-c", p.installScript(upload, codec, strings.Repeat("0", 64)))
			var errb bytes.Buffer
			cmd.Stderr = &errb
			err = cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != exitThinChecksum {
				t.Fatalf("wrong checksum: err %v, stderr %s; want exit %d", err, errb.String(), exitThinChecksum)
			}
			if names := dirNames(t, p.ThinDir); len(names) != 0 {
				t.Errorf("files left after a wrong checksum: %v", names)
			}
		})
	}
}

// TestInstallRefusesDamagedUpload: a truncated compressed upload fails in
// the decompressor, before any of it runs, and leaves nothing behind.
func TestInstallRefusesDamagedUpload(t *testing.T) {
	dir := buildThin(t)
	b, err := OpenBundle(dir, filepath.Join(t.TempDir(), "cache"))
	if err != nil {
		t.Fatal(err)
	}
	p, upload, sum := stageUpload(t, b, CodecZstd, func(data []byte) []byte { return data[:len(data)/2] })
	var errb bytes.Buffer
	cmd := exec.Command("/bin/sh", "-c", p.installScript(upload, CodecZstd, sum))
	cmd.Stderr = &errb
	err = cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitThinChecksum || !strings.Contains(errb.String(), "thin unpack failed") {
		t.Fatalf("damaged upload: err %v, stderr %s; want exit %d", err, errb.String(), exitThinChecksum)
	}
	if names := dirNames(t, p.ThinDir); len(names) != 0 {
		t.Errorf("files left after a damaged upload: %v", names)
	}
}

// stageUpload puts b's payload for codec into a fresh thin_dir as the
// upload would (mode 0700), passed through damage when it is not nil, and
// returns the host's script parameters, the upload's name and the sha256.
// It skips when the host lacks the codec's tool.
func stageUpload(t *testing.T, b *Bundle, codec Codec, damage func([]byte) []byte) (scriptParams, string, string) {
	t.Helper()
	if u := codec.unpack(); u != "" {
		if _, err := exec.LookPath(strings.Fields(u)[0]); err != nil {
			t.Skipf("%s not installed here", u)
		}
	}
	payload, sum, err := b.Payload(runtime.GOARCH, codec)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(payload)
	if err != nil {
		t.Fatal(err)
	}
	if damage != nil {
		data = damage(data)
	}
	thinDir := filepath.Join(t.TempDir(), "thin")
	if err := os.Mkdir(thinDir, 0o700); err != nil {
		t.Fatal(err)
	}
	upload := "upload" + codec.ext()
	if err := os.WriteFile(filepath.Join(thinDir, upload), data, 0o700); err != nil {
		t.Fatal(err)
	}
	return scriptParams{ThinDir: thinDir, Bin: b.BinName(), Umask: -1}, upload, sum
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestWipeThroughSymlinkedPath: --wipe removes thin_dir when its path
// goes through a symlink (the binary sees its resolved path), and refuses
// a thin_dir argument that is itself a symlink, which RemoveAll would
// only unlink.
func TestWipeThroughSymlinkedPath(t *testing.T) {
	b, err := OpenBundle(buildThin(t), filepath.Join(t.TempDir(), "cache"))
	if err != nil {
		t.Fatal(err)
	}
	p, upload, sum := stageUpload(t, b, CodecRaw, nil)
	real := p.ThinDir
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(filepath.Dir(real), link); err != nil {
		t.Fatal(err)
	}
	p.ThinDir = filepath.Join(link, filepath.Base(real))
	p.Wipe = true
	installPing(t, p, upload, CodecRaw, sum)
	if _, err := os.Stat(real); !os.IsNotExist(err) {
		t.Errorf("thin_dir still there after --wipe through %s: %v", link, err)
	}

	// A thin_dir argument that is a symlink to the binary's directory.
	p, upload, sum = stageUpload(t, b, CodecRaw, nil)
	installPing(t, p, upload, CodecRaw, sum)
	dirLink := filepath.Join(t.TempDir(), "thin-link")
	if err := os.Symlink(p.ThinDir, dirLink); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(p.ThinDir, b.BinName()), "call", "--wipe", dirLink)
	cmd.Stdin = strings.NewReader(`{"fun":"test.ping","id":"h"}`)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("call: %v\n%s", err, errb.String())
	}
	if _, err := os.Stat(filepath.Join(p.ThinDir, b.BinName())); err != nil || !strings.Contains(errb.String(), "not wiping") {
		t.Errorf("--wipe of a symlink to thin_dir: binary %v, stderr %q; want it refused", err, errb.String())
	}
}

// TestProbeRunsCoreOnlyForCoreJobs: a job the core flavor may run starts
// the full thin when present, else the core; other jobs never look at
// the core. A redeploy's probe reports whether the full thin is there.
func TestProbeRunsCoreOnlyForCoreJobs(t *testing.T) {
	p := scriptParams{ThinDir: "/t", Bin: "salt-thin-f", Umask: -1}
	if s := p.probeScript(); strings.Contains(s, "$C") {
		t.Errorf("probe without Core mentions the core:\n%s", s)
	}
	p.Core = "salt-thin-core-c"
	s := p.probeScript()
	full, core := strings.Index(s, `exec "$B" call`), strings.Index(s, `exec "$C" call`)
	if full < 0 || core < full || !strings.Contains(s, `C="$T"/'salt-thin-core-c'`) {
		t.Errorf("probe does not try the full thin, then the core:\n%s", s)
	}
	p.Force = true
	if s := p.probeScript(); strings.Contains(s, "exec") || !strings.Contains(s, hasFullToken) {
		t.Errorf("redeploy probe runs a binary or does not report the full thin:\n%s", s)
	}
}

// TestCoreInstallKeepsThisBuildsFull: installing the core flavor removes
// other builds of either flavor but leaves the full thin of this build,
// which a concurrent run may just have put there.
func TestCoreInstallKeepsThisBuildsFull(t *testing.T) {
	b, err := OpenBundle(buildFlavors(t), filepath.Join(t.TempDir(), "cache"))
	if err != nil {
		t.Fatal(err)
	}
	p, upload, sum := stageUpload(t, b.Core, CodecRaw, nil)
	p.Keep = b.BinName()
	for _, n := range []string{b.BinName(), "salt-thin-0123456789abcdef", "salt-thin-core-0123456789abcdef"} {
		if err := os.WriteFile(filepath.Join(p.ThinDir, n), nil, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	installPing(t, p, upload, CodecRaw, sum)
	want := []string{b.BinName(), b.Core.BinName()}
	slices.Sort(want)
	if names := dirNames(t, p.ThinDir); !slices.Equal(names, want) {
		t.Errorf("thin_dir holds %v, want %v", names, want)
	}
}

// TestProbeDeployLine runs a cold host's probe under each shell there is
// and checks the deploy line against uname; under bash, whose variables
// name the machine, PATH holds nothing but the decompressor, so a uname
// run would fail the line.
func TestProbeDeployLine(t *testing.T) {
	out, err := exec.Command("uname", "-s", "-m").Output()
	if err != nil {
		t.Fatal(err)
	}
	kernel, machine, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
	zstd, err := exec.LookPath("zstd")
	if err != nil {
		testhosts.Skip(t, "zstd not installed")
	}
	onlyZstd := t.TempDir()
	if err := os.Symlink(zstd, filepath.Join(onlyZstd, "zstd")); err != nil {
		t.Fatal(err)
	}
	p := scriptParams{ThinDir: filepath.Join(t.TempDir(), "thin"), Bin: "salt-thin-f", Umask: -1}
	for _, sh := range []string{"bash", "dash", "sh"} {
		path, err := exec.LookPath(sh)
		if err != nil {
			continue
		}
		cmd := exec.Command(path, "-c", p.probeScript())
		if sh == "bash" && (machine == "x86_64" || machine == "aarch64") {
			cmd.Env = []string{"PATH=" + onlyZstd}
		}
		out, err := cmd.Output()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != exitThinDeploy {
			t.Fatalf("%s: probe exit %v, want %d; output %q", sh, err, exitThinDeploy, out)
		}
		got, err := parseDeployLine(string(out))
		got.freeKiB, got.hasFree = 0, false // see TestProbeReportsFreeSpace
		arch, _ := Arch(kernel, machine)
		if want := (deployLine{arch: arch, codec: CodecZstd}); err != nil || got != want {
			t.Errorf("%s: deploy line %q = %+v (%v), want %+v", sh, out, got, err, want)
		}
		if _, err := os.Stat(p.ThinDir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: probe made thin_dir (the upload makes it): %v", sh, err)
		}
	}
}

// TestWaitingProbe runs a waiting probe on a cold thin_dir under each
// shell there is: it drops the job lines already on stdin (the password
// line too), prints its deploy line ending in waitToken, and then runs the
// go-ahead's command with the stdin that follows; if stdin ends instead,
// it exits 11 having run nothing.
func TestWaitingProbe(t *testing.T) {
	for _, sh := range []string{"bash", "dash", "sh"} {
		path, err := exec.LookPath(sh)
		if err != nil {
			continue
		}
		for _, password := range []bool{false, true} {
			p := scriptParams{ThinDir: filepath.Join(t.TempDir(), "thin"), Bin: "salt-thin-f", Umask: -1, Wait: true, Password: password}
			pre := `{"fun":"test.ping"}` + "\n"
			if password {
				pre = "pw\n" + pre
			}
			cmd := exec.Command(path, "-c", p.probeScript())
			cmd.Stdin = strings.NewReader(pre + goMarker + ` read -r J; echo "ran with $J"; exit 0` + "\n" + `{"again":1}` + "\n")
			out, err := cmd.Output()
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			if err != nil || len(lines) != 2 || !strings.HasPrefix(lines[0], deployMarker+" ") || !strings.HasSuffix(lines[0], " "+waitToken) ||
				lines[1] != `ran with {"again":1}` {
				t.Errorf("%s (password %v): %v, output %q", sh, password, err, out)
			}

			cmd = exec.Command(path, "-c", p.probeScript())
			cmd.Stdin = strings.NewReader(pre)
			out, err = cmd.Output()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != exitThinDeploy || strings.Count(string(out), "\n") != 1 {
				t.Errorf("%s (password %v), stdin closed: %v, output %q; want exit %d after the deploy line", sh, password, err, out, exitThinDeploy)
			}
		}
	}
}
