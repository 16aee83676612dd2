package crypt

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
)

// Crypticle layout constants (salt/crypt.py Crypticle).
const (
	// AESKeySize is Crypticle's default key_size in bits: AES-192.
	AESKeySize = 192
	// SigSize is the HMAC-SHA256 length.
	SigSize = sha256.Size
	// NonceSize is the length of a uuid4().hex nonce.
	NonceSize = 32
)

// PicklePad prefixes every Crypticle plaintext.
var PicklePad = []byte("pickle::")

// Crypticle is Salt's session cipher: AES-192-CBC with PKCS#7 padding
// and a random IV, authenticated with HMAC-SHA256 over IV‖ciphertext.
// The wire layout is IV(16) ‖ ciphertext ‖ HMAC(32). It is safe for
// concurrent use; the serial check of Loads is serialised.
type Crypticle struct {
	keyString string
	aesKey    []byte
	hmacKey   []byte

	mu     sync.Mutex
	serial int
}

// GenerateKeyString returns a new key string: base64 of 24 random AES key
// bytes followed by 32 HMAC key bytes (Crypticle.generate_key_string).
func GenerateKeyString() string {
	b := make([]byte, AESKeySize/8+SigSize)
	_, _ = rand.Read(b) // crypto/rand.Read does not fail on Linux
	return base64.StdEncoding.EncodeToString(b)
}

// NewCrypticle builds a Crypticle from a key string, which must decode to
// 24+32 bytes (Crypticle.extract_keys).
func NewCrypticle(keyString string) (*Crypticle, error) {
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(keyString))
	if err != nil || len(raw) != AESKeySize/8+SigSize {
		return nil, fmt.Errorf("crypticle key: %w", ErrInvalidKey)
	}
	return &Crypticle{
		keyString: keyString,
		aesKey:    raw[:len(raw)-SigSize],
		hmacKey:   raw[len(raw)-SigSize:],
	}, nil
}

// KeyString returns the key string the Crypticle was built from.
func (c *Crypticle) KeyString() string { return c.keyString }

// Encrypt is Crypticle.encrypt.
func (c *Crypticle) Encrypt(data []byte) []byte {
	iv := make([]byte, aes.BlockSize)
	_, _ = rand.Read(iv)
	return c.encryptIV(data, iv)
}

func (c *Crypticle) encryptIV(data, iv []byte) []byte {
	pad := aes.BlockSize - len(data)%aes.BlockSize
	buf := make([]byte, 0, aes.BlockSize+len(data)+pad+SigSize)
	buf = append(buf, iv...)
	buf = append(buf, data...)
	buf = append(buf, bytes.Repeat([]byte{byte(pad)}, pad)...)
	block, _ := aes.NewCipher(c.aesKey) // the key length is fixed above
	cipher.NewCBCEncrypter(block, iv).CryptBlocks(buf[aes.BlockSize:], buf[aes.BlockSize:])
	mac := hmac.New(sha256.New, c.hmacKey)
	mac.Write(buf)
	return mac.Sum(buf)
}

// Decrypt is Crypticle.decrypt: the HMAC is checked in constant time
// first (ErrAuthentication), then the CBC ciphertext is decrypted and
// unpadded. Like Salt, the pad length is taken from the last byte without
// further checks (an authenticated message always pads correctly); a pad
// longer than the data yields empty plaintext.
func (c *Crypticle) Decrypt(data []byte) ([]byte, error) {
	if len(data) < SigSize {
		return nil, ErrAuthentication
	}
	body, sig := data[:len(data)-SigSize], data[len(data)-SigSize:]
	mac := hmac.New(sha256.New, c.hmacKey)
	mac.Write(body)
	if !hmac.Equal(mac.Sum(nil), sig) {
		return nil, ErrAuthentication
	}
	if len(body) < 2*aes.BlockSize || len(body)%aes.BlockSize != 0 {
		return nil, fmt.Errorf("crypticle: ciphertext of %d bytes: %w", len(body), ErrDecrypt)
	}
	iv, ct := body[:aes.BlockSize], body[aes.BlockSize:]
	out := make([]byte, len(ct))
	block, _ := aes.NewCipher(c.aesKey)
	cipher.NewCBCDecrypter(block, iv).CryptBlocks(out, ct)
	pad := int(out[len(out)-1])
	if pad == 0 || pad > len(out) {
		return out[:0], nil
	}
	return out[:len(out)-pad], nil
}

// Dumps is Crypticle.dumps: "pickle::", the nonce when given, then
// msgpack of obj (use_bin_type=False), encrypted.
func (c *Crypticle) Dumps(obj any, nonce string) ([]byte, error) {
	body, err := protocol.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("crypticle dumps: %w", err)
	}
	pt := make([]byte, 0, len(PicklePad)+len(nonce)+len(body))
	pt = append(pt, PicklePad...)
	pt = append(pt, nonce...)
	pt = append(pt, body...)
	return c.Encrypt(pt), nil
}

// Loads is Crypticle.loads. After decryption, data without the
// "pickle::" prefix yields an empty map, as in Salt. With a nonce, the
// next 32 bytes must equal it (ErrNonce). A map carrying "serial" has it
// removed; a serial not above the last one seen makes the result an
// empty map (Salt ignores replayed publications).
func (c *Crypticle) Loads(data []byte, nonce string) (any, error) {
	pt, err := c.Decrypt(data)
	if err != nil {
		return nil, err
	}
	if !bytes.HasPrefix(pt, PicklePad) {
		return ordered.New(), nil
	}
	pt = pt[len(PicklePad):]
	if nonce != "" {
		if len(pt) < NonceSize || string(pt[:NonceSize]) != nonce {
			return nil, ErrNonce
		}
		pt = pt[NonceSize:]
	}
	v, err := protocol.Unmarshal(pt)
	if err != nil {
		return nil, fmt.Errorf("crypticle loads: %w", err)
	}
	m, ok := v.(*ordered.Map)
	if !ok || !m.Has("serial") {
		return v, nil
	}
	serial, isInt := protocol.AsInt(m.Value("serial"))
	m.Delete("serial")
	c.mu.Lock()
	defer c.mu.Unlock()
	if !isInt || serial <= c.serial {
		return ordered.New(), nil
	}
	c.serial = serial
	return m, nil
}

// WriteKeyFile stores a new key string at path with mode 0600, through a
// temporary file and a rename (Crypticle.write_key, used for the
// master's per-minion session keys under cachedir/sessions), and returns
// it. It does not fsync, as Salt does not: a key lost in a crash is
// only a session key, and a reader that finds an empty or damaged file
// makes a new one.
func WriteKeyFile(path string) (string, error) {
	ks := GenerateKeyString()
	if err := WriteFileReplace(path, []byte(ks), 0o600); err != nil {
		return "", fmt.Errorf("write key: %w", err)
	}
	return ks, nil
}

// ReadKeyFile reads a key string written by WriteKeyFile
// (Crypticle.read_key).
func ReadKeyFile(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read key: %w", err)
	}
	return string(data), nil
}
