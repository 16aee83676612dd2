package main

import (
	"bytes"
	"crypto"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"context"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/clearsign"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
)

// signConfig signs with SHA-256 (apt refuses SHA-1 signatures) at time
// now.
func signConfig(now time.Time) *packet.Config {
	return &packet.Config{DefaultHash: crypto.SHA256, Time: func() time.Time { return now }}
}

// NewKey makes a signing key: an ed25519 (OpenPGP v4 EdDSA) key that
// gpgv, and so apt and yum, verify. It is for tests and trials: a real
// repository is signed with the site's own key.
func NewKey(name string, now time.Time) (*openpgp.Entity, error) {
	cfg := signConfig(now)
	cfg.Algorithm = packet.PubKeyAlgoEdDSA
	cfg.Curve = packet.Curve25519
	return openpgp.NewEntity(name, "repository signing key", "", cfg)
}

// WriteKey writes e's secret key (0600) and public key, armored, as
// secret.asc and public.asc in dir.
func WriteKey(e *openpgp.Entity, dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	var sec, pub bytes.Buffer
	w, err := armor.Encode(&sec, openpgp.PrivateKeyType, nil)
	if err != nil {
		return err
	}
	if err := e.SerializePrivate(w, nil); err != nil {
		return fmt.Errorf("serialize key: %w", err)
	}
	if err := w.Close(); err != nil {
		return err
	}
	if err := armorPublic(e, &pub); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "secret.asc"), sec.Bytes(), 0o600); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "public.asc"), pub.Bytes(), 0o644)
}

func armorPublic(e *openpgp.Entity, out io.Writer) error {
	w, err := armor.Encode(out, openpgp.PublicKeyType, nil)
	if err != nil {
		return err
	}
	if err := e.Serialize(w); err != nil {
		return fmt.Errorf("serialize public key: %w", err)
	}
	return w.Close()
}

// ReadKey reads an armored secret key. A passphrase-protected key is
// decrypted with the passphrase in passFile (never on the command line);
// without one it is refused.
func ReadKey(path, passFile string) (*openpgp.Entity, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ring, err := openpgp.ReadArmoredKeyRing(f)
	if err != nil {
		return nil, fmt.Errorf("read key %s: %w", path, err)
	}
	if len(ring) == 0 || ring[0].PrivateKey == nil {
		return nil, fmt.Errorf("read key %s: no secret key in it", path)
	}
	e := ring[0]
	if !e.PrivateKey.Encrypted {
		return e, nil
	}
	if passFile == "" {
		return nil, fmt.Errorf("key %s is passphrase-protected: name a file holding the passphrase with -passphrase-file", path)
	}
	pass, err := os.ReadFile(passFile)
	if err != nil {
		return nil, err
	}
	if err := e.DecryptPrivateKeys(bytes.TrimRight(pass, "\r\n")); err != nil {
		return nil, fmt.Errorf("decrypt key %s: %w", path, err)
	}
	return e, nil
}

// clearSign returns body signed inline (apt's InRelease).
func clearSign(e *openpgp.Entity, body []byte, now time.Time) ([]byte, error) {
	var out bytes.Buffer
	w, err := clearsign.Encode(&out, e.PrivateKey, signConfig(now))
	if err != nil {
		return nil, fmt.Errorf("clearsign: %w", err)
	}
	if _, err := w.Write(body); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// detachSign returns an armored detached signature of body (apt's
// Release.gpg, yum's repomd.xml.asc).
func detachSign(e *openpgp.Entity, body []byte, now time.Time) ([]byte, error) {
	var out bytes.Buffer
	if err := openpgp.ArmoredDetachSign(&out, e, bytes.NewReader(body), signConfig(now)); err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}
	return out.Bytes(), nil
}

func cmdKey(_ context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("key", flag.ContinueOnError)
	out := fs.String("out", "", "directory for secret.asc and public.asc")
	name := fs.String("name", "Brine test repository", "the key's user id")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" {
		return errors.New("-out DIR is required")
	}
	e, err := NewKey(*name, time.Now())
	if err != nil {
		return err
	}
	if err := WriteKey(e, *out); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s\n", filepath.Join(*out, "secret.asc"))
	return nil
}
