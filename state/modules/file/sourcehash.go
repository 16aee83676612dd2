package file

import (
	"context"
	"fmt"
	"os"
	"path"
	"regexp"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/state/modules"
)

// hashLens is salt.modules.file's HASHES, in its order.
var hashLens = []struct {
	name string
	n    int
}{{"sha512", 128}, {"sha384", 96}, {"sha256", 64}, {"sha224", 56}, {"sha1", 40}, {"md5", 32}}

func hashTypeByLen(n int) string {
	for _, h := range hashLens {
		if h.n == n {
			return h.name
		}
	}
	return ""
}

func hashLen(t string) int {
	for _, h := range hashLens {
		if h.name == t {
			return h.n
		}
	}
	return 0
}

var validProtos = []string{"salt", "file", "http", "https", "ftp", "swift", "s3"}

func invalidSourceHash(sourceHash string) error {
	return modules.Errorf("Source hash %s format is invalid. The supported formats are: "+
		"1) a hash, 2) an expression in the format <hash_type>=<hash>, or "+
		"3) either a path to a local file containing hashes, or a URI of "+
		"a remote hash file. Supported protocols for remote hash files "+
		"are: %s. The hash may also not be of a valid length, the "+
		"following are supported hash types and lengths: md5 (32), sha1 (40), sha224 (56), sha256 (64), sha384 (96), sha512 (128).",
		sourceHash, strings.Join(validProtos, ", "))
}

var hexRe = regexp.MustCompile(`^[0-9a-fA-F]+$`)

// SourceSum is file.get_source_sum: the hash type and lower-case digest
// a source_hash names — "<type>=<hex>", a bare digest (type by length),
// or a local path or URL of a hash file (read through cp.cache_file)
// searched for source_hash_name, the file's or the source's name.
func SourceSum(ctx context.Context, env *modules.Env, fileName, source, sourceHash, sourceHashName, saltenv string) (htype, hsum string, err error) {
	hashFile := ""
	if strings.HasPrefix(sourceHash, "/") {
		hashFile = sourceHash
	} else if proto, _, ok := strings.Cut(sourceHash, "://"); ok {
		if !containsStr(validProtos, proto) {
			return "", "", invalidSourceHash(sourceHash)
		}
		cached, err := env.Run(ctx, "cp.cache_file", []any{sourceHash, saltenv}, ordered.New())
		if err != nil || !modules.Truthy(cached) {
			return "", "", modules.Errorf("Source hash file %s not found", sourceHash)
		}
		hashFile = py.Str(cached)
	}
	if hashFile != "" {
		b, err := os.ReadFile(hashFile)
		if err != nil {
			return "", "", modules.Errorf("Source hash file %s not found", sourceHash)
		}
		t, s, ok := ExtractHash(string(b), fileName, source, sourceHashName)
		if !ok {
			return "", "", invalidSourceHash(sourceHash)
		}
		return t, strings.ToLower(s), nil
	}
	htype, hsum, hasType := strings.Cut(sourceHash, "=")
	htype, hsum = strings.TrimSpace(htype), strings.TrimSpace(hsum)
	if !hasType {
		if !hexRe.MatchString(sourceHash) {
			return "", "", invalidSourceHash(sourceHash)
		}
		hsum = sourceHash
		if htype = hashTypeByLen(len(hsum)); htype == "" {
			return "", "", invalidSourceHash(sourceHash)
		}
	}
	if hashLen(htype) == 0 {
		return "", "", modules.Errorf("Invalid hash type '%s'. Supported hash types are: sha512, sha384, sha256, sha224, sha1, md5. "+
			"Either remove the hash type and simply use '%s' as the source_hash, or change the hash type to a supported type.", htype, hsum)
	}
	switch n := len(hsum); {
	case hashTypeByLen(n) == "":
		return "", "", invalidSourceHash(sourceHash)
	case n != hashLen(htype):
		return "", "", modules.Errorf("Invalid length (%d) for hash type '%s'. Either remove the hash type and simply use '%s' as the source_hash, or change the hash type to '%s'",
			n, htype, hsum, hashTypeByLen(n))
	}
	return htype, strings.ToLower(hsum), nil
}

func containsStr(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

var lineHashRe = regexp.MustCompile(`(?i)(?:^|[^a-z0-9])([a-f0-9]{32,128})(?:[^a-z0-9]|$)`)

// ExtractHash is file.extract_hash over a hash file's text: the hash on
// the line naming sourceHashName, else fileName, else source (by base
// name), else the first hash in the file.
func ExtractHash(text, fileName, source, sourceHashName string) (htype, hsum string, ok bool) {
	type match struct{ t, s string }
	found := map[string][]match{}
	var partial *match
	sourceBase := path.Base(strings.SplitN(strings.TrimPrefix(source, "//"), "?", 2)[0])
	if i := strings.Index(source, "://"); i >= 0 {
		rest := source[i+3:]
		if j := strings.IndexByte(rest, '/'); j >= 0 {
			sourceBase = path.Base(rest[j:])
		} else {
			sourceBase = rest
		}
	}
	names := []struct{ kind, full, base, seps string }{
		{"source_hash_name", sourceHashName, sourceHashName, " \t\n\r\v\f"},
		{"file_name", fileName, path.Base(fileName), " \t\n\r\v\f\\/*"},
		{"source", source, sourceBase, " \t\n\r\v\f\\/*"},
	}
	for _, raw := range strings.Split(text, "\n") {
		line := strings.TrimSpace(raw)
		m := lineHashRe.FindStringSubmatch(line)
		if m == nil || hashTypeByLen(len(m[1])) == "" {
			continue
		}
		cur := match{hashTypeByLen(len(m[1])), m[1]}
		if partial == nil {
			partial = &cur
		}
		for _, n := range names {
			if n.full == "" {
				continue
			}
			hit := false
			if strings.HasSuffix(line, n.base) {
				i := len(line) - len(n.base) - 1
				hit = i >= 0 && strings.ContainsRune(n.seps, rune(line[i]))
			} else if strings.HasPrefix(line, n.full) && len(line) > len(n.full) && strings.ContainsRune(" \t", rune(line[len(n.full)])) {
				hit = true
			}
			if hit {
				found[n.kind] = append(found[n.kind], cur)
			}
		}
	}
	for _, kind := range []string{"source_hash_name", "file_name", "source"} {
		if l := found[kind]; len(l) > 0 {
			return l[0].t, l[0].s, true
		}
	}
	if partial != nil {
		return partial.t, partial.s, true
	}
	return "", "", false
}

// FetchRemote caches an http(s), ftp, s3 or swift source through
// cp.cache_file, as manage_file does, and reads it.
func FetchRemote(ctx context.Context, env *modules.Env, src, saltenv string) ([]byte, string, error) {
	if env.Registry == nil {
		return nil, fmt.Sprintf("Source file '%s' not found", src), nil
	}
	cached, err := env.Run(ctx, "cp.cache_file", []any{src, saltenv}, ordered.New())
	if err != nil {
		return nil, "", err
	}
	if !modules.Truthy(cached) {
		return nil, fmt.Sprintf("Source file '%s' not found", src), nil
	}
	b, err := os.ReadFile(py.Str(cached))
	if err != nil {
		return nil, "", fmt.Errorf("read cached %s: %w", src, err)
	}
	return b, "", nil
}
