package sshexec

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/klauspost/compress/zstd"

	"github.com/brinesalt/brine/internal/version"
)

// Bundle is the set of thin binaries salt-ssh can send, one per target
// architecture, found beside the salt-ssh executable (the Makefile builds
// them as salt-thin-linux-<goarch>). All hosts share one version id, the
// hash of every binary's hash, so a host can tell in the first round trip
// whether it already has this build, before its architecture is known.
//
// Core, when the core thin binaries (salt-thin-core-linux-<goarch>) are
// there too, is their own Bundle, with its own ID: salt-ssh sends the
// core flavor to a host that has no full thin of this build, for a
// function the core links (see thin/core).
type Bundle struct {
	ID       string            // 16 hex digits naming this build on targets
	Core     *Bundle           // the core flavor; nil when not built
	prefix   string            // binary name prefix on targets: salt-thin- or salt-thin-core-
	binaries map[string]string // goarch → path
	sums     map[string]string // goarch → sha256 hex
	cacheDir string            // where compressed copies are kept

	mu     sync.Mutex
	once   map[string]*sync.Once // per arch and codec
	errs   map[string]error
	paths  map[string]string // per arch and codec: the cached copy to send
	checks map[string]string // per arch and codec: the sha256 the host checks
}

// ErrNoThin means no thin binary exists for a target's architecture.
var ErrNoThin = errors.New("no thin binary")

// The flavors' file names: <flavor>-linux-<goarch> beside salt-ssh,
// <flavor>-<ID> in a host's thin_dir.
const (
	flavorFull = "salt-thin"
	flavorCore = "salt-thin-core"
)

// OpenBundle finds salt-thin-linux-* binaries in dir, and with them the
// core flavor's salt-thin-core-linux-* if there are any. cacheDir (Salt's
// cachedir/thin) holds their hashes and compressed copies between runs, so a
// warm run reads no binary at all.
func OpenBundle(dir, cacheDir string) (*Bundle, error) {
	b, err := openFlavor(dir, cacheDir, flavorFull)
	if err != nil {
		return nil, err
	}
	if b.Core, err = openFlavor(dir, cacheDir, flavorCore); errors.Is(err, ErrNoThin) {
		b.Core, err = nil, nil
	}
	return b, err
}

// openFlavor finds the <flavor>-linux-* binaries in dir.
func openFlavor(dir, cacheDir, flavor string) (*Bundle, error) {
	paths, err := filepath.Glob(filepath.Join(dir, flavor+"-linux-*"))
	if err != nil {
		return nil, fmt.Errorf("find thin binaries: %w", err)
	}
	b := &Bundle{prefix: flavor + "-", binaries: map[string]string{}, sums: map[string]string{}, cacheDir: cacheDir,
		once: map[string]*sync.Once{}, errs: map[string]error{}, paths: map[string]string{},
		checks: map[string]string{}}
	for _, p := range paths {
		arch := strings.TrimPrefix(filepath.Base(p), flavor+"-linux-")
		if strings.Contains(arch, ".") {
			continue
		}
		b.binaries[arch] = p
	}
	if len(b.binaries) == 0 {
		return nil, fmt.Errorf("find thin binaries in %s: %w", dir, ErrNoThin)
	}
	if err := os.MkdirAll(cacheDir, 0o700); err != nil {
		return nil, fmt.Errorf("create thin cache: %w", err)
	}
	idx := loadSumIndex(cacheDir)
	changed := false
	archs := make([]string, 0, len(b.binaries))
	for arch, p := range b.binaries {
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("stat thin binary: %w", err)
		}
		key := fmt.Sprintf("%s|%d|%d", p, st.Size(), st.ModTime().UnixNano())
		sum, ok := idx[key]
		if !ok {
			if sum, err = inspect(p); err != nil {
				return nil, err
			}
			idx[key] = sum
			changed = true
		}
		b.sums[arch] = sum
		archs = append(archs, arch)
	}
	if changed {
		saveSumIndex(cacheDir, idx)
	}
	sort.Strings(archs)
	h := sha256.New()
	for _, a := range archs {
		fmt.Fprintf(h, "%s %s\n", a, b.sums[a])
	}
	b.ID = hex.EncodeToString(h.Sum(nil))[:16]
	return b, nil
}

// BinName is the file name of this build inside a host's thin_dir:
// salt-thin-<ID>, or salt-thin-core-<ID> for the core flavor.
func (b *Bundle) BinName() string { return b.prefix + b.ID }

// Has reports whether b holds a binary for arch; a nil Bundle holds none.
func (b *Bundle) Has(arch string) bool {
	if b == nil {
		return false
	}
	_, ok := b.binaries[arch]
	return ok
}

// Arch maps `uname -s`/`uname -m` output to a Go architecture.
func Arch(kernel, machine string) (string, error) {
	if kernel != "Linux" {
		return "", fmt.Errorf("%w for %s %s: only Linux targets are supported", ErrNoThin, kernel, machine)
	}
	switch machine {
	case "x86_64", "amd64":
		return "amd64", nil
	case "aarch64", "arm64", "armv8l":
		return "arm64", nil
	case "i386", "i486", "i586", "i686":
		return "386", nil
	case "armv7l", "armv6l":
		return "arm", nil
	case "ppc64le":
		return "ppc64le", nil
	case "s390x":
		return "s390x", nil
	case "riscv64":
		return "riscv64", nil
	}
	return "", fmt.Errorf("%w for machine %q", ErrNoThin, machine)
}

// Codec is how the thin binary travels: compressed with a tool the host
// has, or raw. zstd is preferred (smaller, and three times faster to
// unpack than gzip, which matters when a hundred hosts unpack at once);
// gzip is nearly everywhere; raw needs nothing at all.
type Codec string

// The codecs, in order of preference.
const (
	CodecZstd Codec = "zstd"
	CodecGzip Codec = "gzip"
	CodecRaw  Codec = ""
)

// unpack is the host command that decodes an uploaded file of this codec
// beside it: it writes the file named by unpacked with the upload's mode.
// Both formats carry a checksum, so a damaged upload fails here.
func (c Codec) unpack() string {
	switch c {
	case CodecZstd:
		return "zstd -dq"
	case CodecGzip:
		return "gzip -d"
	}
	return ""
}

// consumes reports whether unpack removes the upload (gzip always does),
// so that only the unpacked binary is left to check.
func (c Codec) consumes() bool { return c == CodecGzip }

// ext is the file name suffix the codec's tool expects and strips.
func (c Codec) ext() string {
	switch c {
	case CodecZstd:
		return ".zst"
	case CodecGzip:
		return ".gz"
	}
	return ""
}

// unpacked is the name unpack gives the binary decoded from upload.
func (c Codec) unpacked(upload string) string {
	return strings.TrimSuffix(upload, c.ext())
}

// Payload returns the file to send for arch with codec and the sha256 the
// host checks: of the file sent when the host keeps it after unpacking
// (zstd, raw), of the unpacked binary when it does not (gzip). Compressed
// copies are made once per build and kept in the cache directory.
func (b *Bundle) Payload(arch string, codec Codec) (path, sum string, err error) {
	p, ok := b.binaries[arch]
	if !ok {
		return "", "", fmt.Errorf("%w for linux/%s (build it with make thin)", ErrNoThin, arch)
	}
	sum = b.sums[arch]
	if codec == CodecRaw {
		return p, sum, nil
	}
	out := filepath.Join(b.cacheDir, sum+"."+string(codec)+compressedVersion)
	key := arch + "/" + string(codec)
	b.mu.Lock()
	once := b.once[key]
	if once == nil {
		once = &sync.Once{}
		b.once[key] = once
	}
	b.mu.Unlock()
	once.Do(func() {
		path, err := b.compressed(p, out, sum, codec)
		check := sum
		if err == nil && !codec.consumes() {
			check, err = fileSum(path)
		}
		b.mu.Lock()
		b.paths[key], b.checks[key], b.errs[key] = path, check, err
		b.mu.Unlock()
	})
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.paths[key], b.checks[key], b.errs[key]
}

// fileSum is the sha256 of the file at p, in hex.
func fileSum(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", fmt.Errorf("hash thin payload: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hash thin payload: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// compressed returns the cached compressed copy of the binary at p,
// making it on first use: for zstd, the Makefile's prebuilt copy when it
// checks out (kept under its own cache name, so that it wins over a copy
// salt-ssh made before it existed), else salt-ssh's own.
func (b *Bundle) compressed(p, out, sum string, codec Codec) (string, error) {
	if codec == CodecZstd {
		pre := out + "-prebuilt"
		if _, err := os.Stat(pre); err == nil || adoptPrebuilt(p+prebuiltExt, pre, sum) {
			return pre, nil
		}
	}
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	return out, compressFile(p, out, codec)
}

// zstdWindow is the zstd window: 256 KiB instead of the encoder's 8 MiB
// costs 2.5% more bytes on the wire (4.56 against 4.45 MB for an 11.5 MB
// thin) but, measured with 100 hosts unpacking at once on two cores, cuts
// the decompressors' CPU by a third: every host's window must stay in
// cache while it copies matches out of it, and an 8 MiB window per host
// does not.
const zstdWindow = 256 << 10

// compressedVersion names the compression settings in cached copies'
// file names, so a change of settings never reuses an old copy.
const compressedVersion = "-w18"

// compressFile writes src compressed into dst through a temporary file,
// so a crash never leaves a half-written copy under the final name.
func compressFile(src, dst string, codec Codec) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("read thin binary: %w", err)
	}
	var buf bytes.Buffer
	switch codec {
	case CodecZstd:
		enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBestCompression), zstd.WithEncoderCRC(true),
			zstd.WithWindowSize(zstdWindow))
		if err != nil {
			return fmt.Errorf("compress thin binary: %w", err)
		}
		buf.Write(enc.EncodeAll(data, nil))
	case CodecGzip:
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		zw.Write(data)
		if err := zw.Close(); err != nil {
			return fmt.Errorf("compress thin binary: %w", err)
		}
	default:
		return fmt.Errorf("compress thin binary: unknown codec %q", codec)
	}
	if err := writeCacheFile(dst, buf.Bytes()); err != nil {
		return fmt.Errorf("compress thin binary: %w", err)
	}
	return nil
}

// writeCacheFile writes data to dst through a temporary file in the same
// directory, so a crash never leaves a half-written copy under dst.
func writeCacheFile(dst string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".thin-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), dst)
}

// ErrThinMismatch means a thin binary comes from a build whose remote
// protocol differs from this salt-ssh's.
var ErrThinMismatch = errors.New("thin binary from another build")

// inspect hashes the thin binary at p and checks that it speaks this
// salt-ssh's protocol (the marker in internal/version), so a stale
// binary beside salt-ssh is refused here rather than failing on every
// target.
func inspect(p string) (string, error) {
	data, err := os.ReadFile(p)
	if err != nil {
		return "", fmt.Errorf("read thin binary: %w", err)
	}
	if !bytes.Contains(data, []byte(version.ThinMarker)) {
		return "", fmt.Errorf("%w: %s lacks %q; rebuild it with `make thin`", ErrThinMismatch, p, strings.Trim(version.ThinMarker, "\x00"))
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}

// sumIndexName names the hash index; its version changes whenever what
// an entry vouches for changes (v2: the protocol marker was checked).
const sumIndexName = "sums-v2.json"

func loadSumIndex(dir string) map[string]string {
	idx := map[string]string{}
	if data, err := os.ReadFile(filepath.Join(dir, sumIndexName)); err == nil {
		_ = json.Unmarshal(data, &idx) // a damaged index is only a cache miss
	}
	return idx
}

// saveSumIndex writes the hash index atomically; failing to cache is not
// an error worth stopping a run for.
func saveSumIndex(dir string, idx map[string]string) {
	data, err := json.Marshal(idx)
	if err != nil {
		return
	}
	tmp, err := os.CreateTemp(dir, ".sums-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if werr != nil || cerr != nil {
		os.Remove(tmp.Name())
		return
	}
	if os.Rename(tmp.Name(), filepath.Join(dir, sumIndexName)) != nil {
		os.Remove(tmp.Name())
	}
}
