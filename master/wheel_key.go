package master

import (
	"context"
	"crypto/rand"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/brinesalt/brine/internal/crypt"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/pki"
)

// The key wheel functions (salt/wheel/key.py over salt/key.py Key), on
// the master's own key store, so salt/key events reach the bus and a
// removal leaves .dfn for the maintenance loop.
func init() {
	registerWheel("key.list_all", func(m *Master, _ context.Context, _ wheelArgs) (any, error) {
		return m.pki.AllKeys().Map(), nil
	})
	registerWheel("key.list", func(m *Master, _ context.Context, a wheelArgs) (any, error) {
		match, err := a.required("match", "list_", 1)
		if err != nil {
			return nil, err
		}
		l, err := m.pki.ListStatus(ordered.KeyString(match))
		if err != nil {
			return nil, err
		}
		return l.Map(), nil
	})
	registerWheel("key.name_match", func(m *Master, _ context.Context, a wheelArgs) (any, error) {
		v, err := a.required("match", "name_match", 1)
		if err != nil {
			return nil, err
		}
		return m.pki.NameMatch(globArg(v), false).Map(), nil
	})
	registerWheel("key.accept", keyGlob("accept", (*Master).keyAccept))
	registerWheel("key.accept_dict", keyDict("accept_dict", (*Master).keyAccept))
	registerWheel("key.reject", keyGlob("reject", (*Master).keyReject))
	registerWheel("key.reject_dict", keyDict("reject_dict", (*Master).keyReject))
	registerWheel("key.delete", keyGlob("delete", (*Master).keyDelete))
	registerWheel("key.delete_dict", keyDict("delete_dict", (*Master).keyDelete))
	registerWheel("key.finger", func(m *Master, _ context.Context, a wheelArgs) (any, error) {
		match, err := a.required("match", "finger", 1)
		if err != nil {
			return nil, err
		}
		return m.pki.Finger(ordered.KeyString(match), a.str("hash_type", m.hashType()))
	})
	registerWheel("key.finger_master", func(m *Master, _ context.Context, a wheelArgs) (any, error) {
		f, err := crypt.PemFinger(filepath.Join(m.o.PKIDir, "master.pub"), a.str("hash_type", m.hashType()))
		if err != nil {
			return nil, err
		}
		return ordered.FromPairs("local", ordered.FromPairs("master.pub", f)), nil
	})
	registerWheel("key.print", func(m *Master, _ context.Context, a wheelArgs) (any, error) {
		match, err := a.required("match", "key_str", 1)
		if err != nil {
			return nil, err
		}
		return m.pki.KeyStr(ordered.KeyString(match))
	})
	registerWheel("key.master_key_str", func(m *Master, _ context.Context, _ wheelArgs) (any, error) {
		b, err := os.ReadFile(filepath.Join(m.o.PKIDir, "master.pub"))
		if err != nil {
			return nil, err
		}
		return ordered.FromPairs("local", ordered.FromPairs("master.pub", string(b))), nil
	})
	registerWheel("key.gen", func(_ *Master, _ context.Context, a wheelArgs) (any, error) {
		return keyGen(a, false)
	})
	registerWheel("key.gen_accept", func(m *Master, _ context.Context, a wheelArgs) (any, error) {
		return m.keyGenAccept(a)
	})
}

// hashType is the master's hash_type (fingerprints), sha256 by default.
func (m *Master) hashType() string {
	if s, _ := m.o.Raw.Value("hash_type").(string); s != "" {
		return s
	}
	return crypt.DefaultHashType
}

// keyAction changes the keys of a pre-gathered match and returns their
// new states (Key.dict_match).
type keyAction func(m *Master, match pki.Listing, a wheelArgs) pki.Listing

// keyGlob is a key function taking a glob: the action runs on the keys
// the glob names, and the answer is name_match of the glob afterwards,
// as salt/key.py returns it.
func keyGlob(pyName string, act keyAction) wheelFunc {
	return func(m *Master, _ context.Context, a wheelArgs) (any, error) {
		v, err := a.required("match", pyName, 1)
		if err != nil {
			return nil, err
		}
		match := globArg(v)
		act(m, m.pki.NameMatch(match, false), a)
		return m.pki.NameMatch(match, false).Map(), nil
	}
}

// globArg is a match given as a string, or as a list of globs (Key
// .name_match joins them as a comma-separated match does).
func globArg(v any) string {
	if l, ok := v.([]any); ok {
		parts := make([]string, len(l))
		for i, x := range l {
			parts[i] = ordered.KeyString(x)
		}
		return strings.Join(parts, ",")
	}
	return ordered.KeyString(v)
}

// keyDict is a key function taking {state: [ids]} (accept_dict and
// friends); the answer is dict_match of it.
func keyDict(pyName string, act keyAction) wheelFunc {
	return func(m *Master, _ context.Context, a wheelArgs) (any, error) {
		v, err := a.required("match", pyName, 1)
		if err != nil {
			return nil, err
		}
		mm, ok := v.(*ordered.Map)
		if !ok {
			// Key.accept ignores a match_dict that is not a dict.
			return ordered.New(), nil
		}
		return act(m, listingOf(mm), a).Map(), nil
	}
}

func listingOf(mm *ordered.Map) pki.Listing {
	var l pki.Listing
	mm.Range(func(k, v any) bool {
		g := pki.Group{State: ordered.KeyString(k), Keys: []string{}}
		ids, _ := v.([]any)
		for _, id := range ids {
			g.Keys = append(g.Keys, ordered.KeyString(id))
		}
		l = append(l, g)
		return true
	})
	return l
}

func (m *Master) keyAccept(match pki.Listing, a wheelArgs) pki.Listing {
	res, errs := m.pki.Accept(match, a.flag("include_rejected"), a.flag("include_denied"))
	for _, e := range errs {
		m.log.Error(e.Error())
	}
	return res
}

func (m *Master) keyReject(match pki.Listing, a wheelArgs) pki.Listing {
	return m.pki.Reject(match, a.flag("include_accepted"), a.flag("include_denied"))
}

func (m *Master) keyDelete(match pki.Listing, _ wheelArgs) pki.Listing {
	if v, ok := m.o.Raw.Get("preserve_minion_cache"); ok {
		m.pki.PreserveMinionCache = v == true
	}
	m.pki.Delete(match)
	m.forgetRemovedKeys()
	return m.pki.DictMatch(match)
}

// The characters salt.utils.sanitizers keeps: clean.filename's class
// (its ".-_" is a range, so it keeps much of ASCII punctuation too) and
// clean.id's (RFC 1123 host names).
var (
	notFilenameChar = regexp.MustCompile(`[^a-zA-Z0-9.-_ ]`)
	notHostnameChar = regexp.MustCompile(`[^a-zA-Z0-9.-]`)
)

// keyGen is key.gen: a key pair that is not kept, {"priv", "pub"}. With
// hostID the id is cleaned as clean.id (gen_accept), else as
// clean.filename; an id that cleans to nothing fails as Salt's
// sanitizer does.
func keyGen(a wheelArgs, hostID bool) (*ordered.Map, error) {
	keysize, err := a.integer("keysize", 2048)
	if err != nil {
		return nil, err
	}
	if _, err := cleanKeyID(a, hostID); err != nil {
		return nil, err
	}
	k, err := crypt.GenerateKey(keysize)
	if err != nil {
		return nil, err
	}
	return ordered.FromPairs("priv", string(crypt.EncodePrivateKey(k)), "pub", string(crypt.EncodePublicKey(&k.PublicKey))), nil
}

func cleanKeyID(a wheelArgs, hostID bool) (string, error) {
	v, given := a.kw.Get("id_")
	if !given || v == nil {
		if hostID {
			return "", fmt.Errorf("gen_accept takes at least 1 argument (0 given)")
		}
		b := make([]byte, 32)
		_, _ = rand.Read(b)
		sum := sha512.Sum512(b)
		return hex.EncodeToString(sum[:]), nil
	}
	id := strings.TrimSpace(ordered.KeyString(v))
	if id == "" {
		//lint:ignore ST1005 Salt's message (salt/utils/sanitizers.py)
		return "", fmt.Errorf("Empty value during sanitation")
	}
	if hostID {
		return strings.Trim(notHostnameChar.ReplaceAllString(id, ""), "."), nil
	}
	return notFilenameChar.ReplaceAllString(filepath.Base(id), ""), nil
}

// keyGenAccept is key.gen_accept: generate a pair and accept its public
// key under the cleaned id; {} when the id is already accepted, unless
// force.
func (m *Master) keyGenAccept(a wheelArgs) (any, error) {
	id, err := cleanKeyID(a, true)
	if err != nil {
		return nil, err
	}
	if !pki.ValidID(m.o.PKIDir, id) {
		return nil, fmt.Errorf("gen_accept: %q is not a valid minion id", id)
	}
	ret, err := keyGen(a, true)
	if err != nil {
		return nil, err
	}
	path := m.pki.Path(pki.Accepted, id)
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() && !a.flag("force") {
		return ordered.New(), nil
	}
	if err := crypt.WriteFileReplace(path, []byte(ret.Value("pub").(string)), 0o644); err != nil {
		return nil, fmt.Errorf("gen_accept %s: %w", id, err)
	}
	return ret, nil
}
