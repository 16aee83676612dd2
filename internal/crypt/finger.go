package crypt

import (
	"bytes"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"hash"
	"os"
	"strings"
)

// DefaultHashType is Salt's hash_type default.
const DefaultHashType = "sha256"

// NewHash returns the hash.Hash of one of Salt's hash_type names (md5,
// sha1, sha224, sha256, sha384, sha512).
func NewHash(name string) (hash.Hash, error) {
	switch name {
	case "md5":
		return md5.New(), nil
	case "sha1":
		return sha1.New(), nil
	case "sha224":
		return sha256.New224(), nil
	case "sha256":
		return sha256.New(), nil
	case "sha384":
		return sha512.New384(), nil
	case "sha512":
		return sha512.New(), nil
	}
	return nil, fmt.Errorf("hash type %q: %w", name, ErrUnsupportedAlgorithm)
}

// PemBody returns what salt.utils.crypt.pem_finger hashes for a key file:
// the non-blank lines other than the first and the last, each with its
// line ending, "\r\n" folded to "\n".
func PemBody(file []byte) []byte {
	var lines [][]byte
	for rest := file; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n')
		line := rest
		if i >= 0 {
			line, rest = rest[:i+1], rest[i+1:]
		} else {
			rest = nil
		}
		if len(bytes.TrimSpace(line)) > 0 {
			lines = append(lines, line)
		}
	}
	if len(lines) < 2 {
		return nil
	}
	body := bytes.Join(lines[1:len(lines)-1], nil)
	return bytes.ReplaceAll(body, []byte("\r\n"), []byte("\n"))
}

// Finger returns the colon-separated hex digest of data
// (pem_finger's formatting: "ab:cd:…").
func Finger(data []byte, hashType string) (string, error) {
	h, err := NewHash(hashType)
	if err != nil {
		return "", err
	}
	h.Write(data)
	hexs := hex.EncodeToString(h.Sum(nil))
	var b strings.Builder
	for i := 0; i < len(hexs); i += 2 {
		if i > 0 {
			b.WriteByte(':')
		}
		b.WriteString(hexs[i : i+2])
	}
	return b.String(), nil
}

// PemFinger is salt.utils.crypt.pem_finger(path=…): the fingerprint of a
// key file's PEM body, as salt-key -f and master_finger use. A missing
// file yields "" as in Salt.
func PemFinger(path, hashType string) (string, error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("fingerprint: %w", err)
	}
	return Finger(PemBody(data), hashType)
}
