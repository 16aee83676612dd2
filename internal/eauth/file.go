package eauth

import (
	"bufio"
	"context"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/crypto/bcrypt"
)

// File is salt/auth/file.py: users and passwords from a local file, set
// by external_auth:file's ^options. ^filetype text (the default) reads
// separated fields (^field_separator, ^username_field,
// ^password_field, counted from 1) with the password in plain text or
// as the hex digest named by ^hashtype (md5, sha256, sha512: the ones
// hashutil.digest offers); htpasswd and htdigest (with ^realm) read
// Apache's files as passlib does.
type File struct {
	Filename       string
	Filetype       string
	Hashtype       string
	FieldSeparator string
	UsernameField  int
	PasswordField  int
	Realm          string
}

// NewFile reads the file backend's settings from its ^options with
// Salt's defaults (_get_file_auth_config).
func NewFile(opts map[string]any) (*File, error) {
	f := &File{Filetype: "text", Hashtype: "plaintext", FieldSeparator: ":", UsernameField: 1, PasswordField: 2}
	str := func(k string, dst *string) {
		if v, ok := opts[k]; ok && v != nil {
			*dst = fmt.Sprint(v)
		}
	}
	str("filename", &f.Filename)
	str("filetype", &f.Filetype)
	str("hashtype", &f.Hashtype)
	str("field_separator", &f.FieldSeparator)
	str("realm", &f.Realm)
	for k, dst := range map[string]*int{"username_field": &f.UsernameField, "password_field": &f.PasswordField} {
		v, ok := opts[k]
		if !ok {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(fmt.Sprint(v)))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("file eauth: ^%s %v is not a field number", k, v)
		}
		*dst = n
	}
	if f.Filename == "" {
		return nil, errors.New("file eauth: an authentication file must be specified via external_auth:file:^filename")
	}
	return f, nil
}

// Authenticate checks the password against the file.
func (f *File) Authenticate(_ context.Context, username, password string) (bool, error) {
	switch strings.ToLower(f.Filetype) {
	case "htdigest":
		return f.htdigest(username, password)
	case "htpasswd":
		return f.htpasswd(username, password)
	}
	// FILETYPE_FUNCTION_MAP.get(filetype, "text") gives the string
	// "text" for an unknown type, which Salt then fails to call.
	if f.Filetype != "text" {
		return false, fmt.Errorf("file eauth: unknown ^filetype %q", f.Filetype)
	}
	return f.text(username, password)
}

func (f *File) lines() ([]string, error) {
	b, err := os.ReadFile(f.Filename)
	if err != nil {
		return nil, fmt.Errorf("file eauth: %w", err)
	}
	var out []string
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	sc.Buffer(nil, len(b)+1)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out, nil
}

// text is file.py _text: the first line of the user decides.
func (f *File) text(username, password string) (bool, error) {
	lines, err := f.lines()
	if err != nil {
		return false, err
	}
	if f.FieldSeparator == "" {
		return false, errors.New("file eauth: ^field_separator is empty")
	}
	for _, line := range lines {
		fields := strings.Split(strings.TrimSpace(line), f.FieldSeparator)
		if f.UsernameField > len(fields) {
			return false, fmt.Errorf("file eauth: username field (%d) does not exist in file %s", f.UsernameField-1, f.Filename)
		}
		if f.PasswordField > len(fields) {
			return false, fmt.Errorf("file eauth: password field (%d) does not exist in file %s", f.PasswordField-1, f.Filename)
		}
		if fields[f.UsernameField-1] != username {
			continue
		}
		stored := fields[f.PasswordField-1]
		if f.Hashtype == "plaintext" {
			return constEq(stored, password), nil
		}
		d, err := digest(password, f.Hashtype)
		if err != nil {
			return false, err
		}
		return constEq(stored, d), nil
	}
	return false, nil
}

// digest is salt/modules/hashutil.py digest: the hex digest of s.
func digest(s, kind string) (string, error) {
	var h hash.Hash
	switch kind {
	case "md5":
		h = md5.New()
	case "sha256":
		h = sha256.New()
	case "sha512":
		h = sha512.New()
	default:
		//lint:ignore ST1005 Salt's message (salt/modules/hashutil.py digest)
		return "", fmt.Errorf("file eauth: Hash func '%s' is not supported.", kind)
	}
	h.Write([]byte(s))
	return hex.EncodeToString(h.Sum(nil)), nil
}

func constEq(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// htdigest is passlib's HtdigestFile.check_password: user:realm:hash with
// hash the hex md5 of "user:realm:password".
func (f *File) htdigest(username, password string) (bool, error) {
	if f.Realm == "" {
		return false, errors.New("file eauth: A ^realm must be defined in external_auth:file for htdigest filetype")
	}
	stored, found, err := f.record("htdigest", []string{username, f.Realm})
	if err != nil || !found {
		return false, err
	}
	sum := md5.Sum([]byte(username + ":" + f.Realm + ":" + password))
	return constEq(strings.ToLower(stored), hex.EncodeToString(sum[:])), nil
}

// htpasswd is passlib's HtpasswdFile.check_password.
func (f *File) htpasswd(username, password string) (bool, error) {
	stored, found, err := f.record("htpasswd", []string{username})
	if err != nil || !found {
		return false, err
	}
	return verifyHtpasswd(stored, password)
}

// record reads an Apache password file of colon-separated records whose
// leading fields are key, followed by the hash: the hash of the last
// record with that key (later records replace earlier ones in passlib).
// Blank lines and comments are skipped; a record with another number of
// fields is an error, as passlib's parser raises.
func (f *File) record(kind string, key []string) (string, bool, error) {
	lines, err := f.lines()
	if err != nil {
		return "", false, err
	}
	stored, found := "", false
	for i, line := range lines {
		line = strings.TrimRight(line, " \t\r\n")
		if line == "" || strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		parts := strings.Split(line, ":")
		if len(parts) != len(key)+1 {
			return "", false, fmt.Errorf("file eauth: malformed %s file (error reading line %d)", kind, i+1)
		}
		if slices.Equal(parts[:len(key)], key) {
			stored, found = parts[len(key)], true
		}
	}
	return stored, found, nil
}

// verifyHtpasswd checks password against one htpasswd hash, identified
// as passlib's htpasswd context does (bcrypt, sha256_crypt,
// sha512_crypt, des_crypt, apr_md5_crypt, md5_crypt, ldap_sha1, and
// plaintext for anything else).
func verifyHtpasswd(stored, password string) (bool, error) {
	switch {
	case strings.HasPrefix(stored, "$2a$"), strings.HasPrefix(stored, "$2b$"), strings.HasPrefix(stored, "$2y$"):
		err := bcrypt.CompareHashAndPassword([]byte(stored), []byte(password))
		if errors.Is(err, bcrypt.ErrMismatchedHashAndPassword) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("file eauth: bcrypt hash: %w", err)
		}
		return true, nil
	case strings.HasPrefix(stored, "{SHA}"):
		sum := sha1.Sum([]byte(password))
		return constEq(stored[len("{SHA}"):], base64.StdEncoding.EncodeToString(sum[:])), nil
	case strings.HasPrefix(stored, "$apr1$"), strings.HasPrefix(stored, "$1$"),
		strings.HasPrefix(stored, "$5$"), strings.HasPrefix(stored, "$6$"):
		return verifyCrypt(stored, password)
	case isDESCrypt(stored):
		return false, errors.New("file eauth: the htpasswd entry is a DES crypt hash, which Brine cannot verify (Go has no crypt(3) DES); rehash it with htpasswd -B (bcrypt)")
	case strings.HasPrefix(stored, "$"):
		return false, fmt.Errorf("file eauth: unsupported htpasswd hash scheme %q", strings.SplitN(stored, "$", 3)[1])
	}
	return constEq(stored, password), nil
}

// isDESCrypt is passlib des_crypt.identify: 13 characters of the crypt
// alphabet.
func isDESCrypt(s string) bool {
	if len(s) != 13 {
		return false
	}
	for _, c := range s {
		if !strings.ContainsRune("./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", c) {
			return false
		}
	}
	return true
}
