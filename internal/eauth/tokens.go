package eauth

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
)

// Tokens is salt/tokens/localfs.py: one msgpack file per token, named by
// the token, mode 0600, under token_dir (<cachedir>/tokens).
//
// Get keeps what it read, keyed by the token and the file's identity
// (os.SameFile, size, modification time), so a request with a known
// token costs a stat, not a read and a decode; a file removed (logout,
// salt-run or rm), replaced or rewritten since is read again at once,
// and expiry is checked on every Get. The zero value is ready to use.
type Tokens struct {
	Dir string

	mu    sync.Mutex
	known map[string]cachedToken
}

// cachedToken is a token file's data as read, with the file's identity.
type cachedToken struct {
	fi   fs.FileInfo
	data *ordered.Map
}

// maxCachedTokens bounds Tokens' cache: past it the cache starts over
// (every token is read from its file once more).
const maxCachedTokens = 4096

// NewToken returns 32 bytes from crypto/rand as 64 hex digits, the
// length of Salt's sha256 tokens.
func NewToken() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on Linux
	}
	return hex.EncodeToString(b)
}

// validToken reports whether tok can name a token file: hex only, so no
// path can escape the directory (localfs uses clean_path for that).
func validToken(tok string) bool {
	if tok == "" || len(tok) > 256 {
		return false
	}
	for _, c := range tok {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// Make stores tdata under a new token, which it sets as tdata's "token"
// (localfs mk_token: written to a .tmp file, then renamed).
func (s *Tokens) Make(tdata *ordered.Map) (string, error) {
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return "", fmt.Errorf("make token: %w", err)
	}
	for {
		tok := NewToken()
		path := filepath.Join(s.Dir, tok)
		if _, err := os.Lstat(path); err == nil {
			continue
		}
		tdata.Set("token", tok)
		b, err := protocol.MarshalBin(tdata)
		if err != nil {
			return "", fmt.Errorf("make token: %w", err)
		}
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, b, 0o600); err != nil {
			return "", fmt.Errorf("make token: %w", err)
		}
		if err := os.Rename(tmp, path); err != nil {
			_ = os.Remove(tmp)
			return "", fmt.Errorf("make token: %w", err)
		}
		return tok, nil
	}
}

// ErrNoToken is a token the store does not have (or no longer has).
var ErrNoToken = errors.New("no such token")

// Get is LoadAuth.get_tok over localfs: the token's data, or ErrNoToken
// when it is unknown, broken, expired or has no expiry (the last three
// are removed, as Salt removes them).
func (s *Tokens) Get(tok string, now time.Time) (*ordered.Map, error) {
	if !validToken(tok) {
		return nil, ErrNoToken
	}
	path := filepath.Join(s.Dir, tok)
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		s.forget(tok)
		return nil, ErrNoToken
	}
	if err != nil {
		return nil, fmt.Errorf("read token: %w", err)
	}
	td := s.cached(tok, fi)
	if td == nil {
		if td, err = s.read(tok, path); err != nil {
			return nil, err
		}
		s.remember(tok, fi, td)
	}
	exp, ok := ordered.Number(td.Value("expire"))
	if !ok || exp < float64(now.UnixNano())/1e9 {
		s.forget(tok)
		_ = os.Remove(path)
		return nil, ErrNoToken
	}
	return td.Copy(), nil
}

// read loads and checks one token file.
func (s *Tokens) read(tok, path string) (*ordered.Map, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNoToken
	}
	if err != nil {
		return nil, fmt.Errorf("read token: %w", err)
	}
	v, err := protocol.Decoder{BinType: true}.Unmarshal(b)
	td, ok := v.(*ordered.Map)
	if err != nil || !ok {
		_ = os.Remove(path) // "Failed to load token - removing broken/empty file."
		return nil, ErrNoToken
	}
	stored, _ := td.Value("token").(string)
	if subtle.ConstantTimeCompare([]byte(stored), []byte(tok)) != 1 {
		return nil, ErrNoToken
	}
	return td, nil
}

// cached is the data remembered for tok if its file is still the one
// it was read from, else nil.
func (s *Tokens) cached(tok string, fi fs.FileInfo) *ordered.Map {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.known[tok]
	if !ok || !os.SameFile(c.fi, fi) || c.fi.Size() != fi.Size() || !c.fi.ModTime().Equal(fi.ModTime()) {
		return nil
	}
	return c.data
}

func (s *Tokens) remember(tok string, fi fs.FileInfo, td *ordered.Map) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.known == nil || len(s.known) >= maxCachedTokens {
		s.known = map[string]cachedToken{}
	}
	s.known[tok] = cachedToken{fi: fi, data: td}
}

func (s *Tokens) forget(tok string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.known, tok)
}

// Remove deletes a token (localfs rm_token); removing an unknown token
// is not an error.
func (s *Tokens) Remove(tok string) error {
	if !validToken(tok) {
		return nil
	}
	s.forget(tok)
	err := os.Remove(filepath.Join(s.Dir, tok))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove token: %w", err)
	}
	return nil
}

// List names the stored tokens (localfs list_tokens).
func (s *Tokens) List() ([]string, error) {
	ents, err := os.ReadDir(s.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	var out []string
	for _, e := range ents {
		if e.Type().IsRegular() && validToken(e.Name()) {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// Clean removes every expired or broken token (Salt's maintenance
// clean_expired_tokens) and reports how many went.
func (s *Tokens) Clean(now time.Time) (int, error) {
	toks, err := s.List()
	if err != nil {
		return 0, err
	}
	n := 0
	for _, t := range toks {
		if _, err := s.Get(t, now); errors.Is(err, ErrNoToken) {
			n++
		}
	}
	return n, nil
}
