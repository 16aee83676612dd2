package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/ulikunitz/xz"
)

// ErrNotDeb is returned for a file that is not a Debian binary package.
var ErrNotDeb = errors.New("not a Debian package")

// debStanza returns the Packages stanza of the .deb at path, published
// as filename: its control fields, then Filename, Size and the sums.
func debStanza(path, filename string) (stanza, arch string, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", "", err
	}
	control, err := DebControl(data)
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", path, err)
	}
	arch = controlField(control, "Architecture")
	if arch == "" {
		return "", "", fmt.Errorf("%s: no Architecture field: %w", path, ErrNotDeb)
	}
	m, s1, s256 := md5.Sum(data), sha1.Sum(data), sha256.Sum256(data)
	var b strings.Builder
	b.WriteString(strings.TrimRight(control, "\n") + "\n")
	fmt.Fprintf(&b, "Filename: %s\nSize: %d\nMD5sum: %s\nSHA1: %s\nSHA256: %s\n",
		filename, len(data), hex.EncodeToString(m[:]), hex.EncodeToString(s1[:]), hex.EncodeToString(s256[:]))
	return b.String(), arch, nil
}

// DebControl returns the control file of a .deb: an ar archive
// ("!<arch>\n", 60-byte member headers, members padded to even sizes)
// whose control.tar, gzip- or xz-compressed or plain, holds ./control.
func DebControl(deb []byte) (string, error) {
	const magic = "!<arch>\n"
	if !bytes.HasPrefix(deb, []byte(magic)) {
		return "", ErrNotDeb
	}
	rest := deb[len(magic):]
	for len(rest) >= 60 {
		hdr := rest[:60]
		if string(hdr[58:60]) != "`\n" {
			return "", fmt.Errorf("bad ar member header: %w", ErrNotDeb)
		}
		name := strings.TrimRight(strings.TrimSpace(string(hdr[:16])), "/")
		size, err := strconv.ParseInt(strings.TrimSpace(string(hdr[48:58])), 10, 64)
		if err != nil || size < 0 || size > int64(len(rest)-60) {
			return "", fmt.Errorf("ar member %q: bad size: %w", name, ErrNotDeb)
		}
		body := rest[60 : 60+size]
		if strings.HasPrefix(name, "control.tar") {
			return controlFromTar(name, body)
		}
		next := 60 + size + size%2
		if next > int64(len(rest)) {
			break
		}
		rest = rest[next:]
	}
	return "", fmt.Errorf("no control.tar member: %w", ErrNotDeb)
}

// maxControl bounds what is read of a control file.
const maxControl = 1 << 20

func controlFromTar(name string, body []byte) (string, error) {
	var r io.Reader = bytes.NewReader(body)
	switch {
	case strings.HasSuffix(name, ".gz"):
		zr, err := gzip.NewReader(r)
		if err != nil {
			return "", fmt.Errorf("%s: %w", name, err)
		}
		r = zr
	case strings.HasSuffix(name, ".xz"):
		zr, err := xz.NewReader(r)
		if err != nil {
			return "", fmt.Errorf("%s: %w", name, err)
		}
		r = zr
	case name != "control.tar":
		return "", fmt.Errorf("%s: unsupported compression", name)
	}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err != nil {
			return "", fmt.Errorf("%s: no ./control: %w", name, err)
		}
		if strings.TrimPrefix(h.Name, "./") == "control" {
			b, err := io.ReadAll(io.LimitReader(tr, maxControl))
			if err != nil {
				return "", fmt.Errorf("%s: %w", name, err)
			}
			return string(b), nil
		}
	}
}

// controlField returns the value of a single-line field of a control
// file ("" when absent).
func controlField(control, name string) string {
	sc := bufio.NewScanner(strings.NewReader(control))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
