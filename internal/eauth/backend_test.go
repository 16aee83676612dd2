package eauth

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func writeFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "users")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestFileBackend(t *testing.T) {
	ctx := context.Background()
	sum := md5.Sum([]byte("trout"))
	legacy := writeFile(t, "46|trey|"+hex.EncodeToString(sum[:])+"\n555|mike|x\n")
	plain := writeFile(t, "dean:goneFishing\ngene:OceanMan\ngene:other\n")
	digest := md5.Sum([]byte("cory:Realm:pw"))
	htdigest := writeFile(t, "cory:Other:x\ncory:Realm:"+hex.EncodeToString(digest[:])+"\n")
	htpasswd := writeFile(t, "# comment\nann:$apr1$abcdefgh$h9FWgUz3n9YxylKLlR5SQ/\nbob:plain\nann2:abJnggxhB/yWI\n")
	short := writeFile(t, "dean\n")
	tests := []struct {
		name     string
		opts     map[string]any
		user, pw string
		want     bool
		errLike  string
	}{
		{"plaintext", map[string]any{"filename": plain}, "dean", "goneFishing", true, ""},
		{"wrong password", map[string]any{"filename": plain}, "dean", "x", false, ""},
		{"first line of a user decides", map[string]any{"filename": plain}, "gene", "other", false, ""},
		{"unknown user", map[string]any{"filename": plain}, "nobody", "x", false, ""},
		{"legacy fields and md5", map[string]any{"filename": legacy, "hashtype": "md5", "field_separator": "|",
			"username_field": 2, "password_field": "3"}, "trey", "trout", true, ""},
		{"unsupported hashtype", map[string]any{"filename": legacy, "hashtype": "sha1", "field_separator": "|",
			"username_field": 2, "password_field": 3}, "trey", "trout", false, "Hash func 'sha1' is not supported."},
		{"missing password field", map[string]any{"filename": short}, "dean", "x", false, "password field (1) does not exist"},
		{"missing file", map[string]any{"filename": plain + ".gone"}, "dean", "x", false, "no such file"},
		{"htdigest", map[string]any{"filename": htdigest, "filetype": "htdigest", "realm": "Realm"}, "cory", "pw", true, ""},
		{"htdigest wrong realm's user", map[string]any{"filename": htdigest, "filetype": "htdigest", "realm": "Nope"}, "cory", "pw", false, ""},
		{"htdigest without realm", map[string]any{"filename": htdigest, "filetype": "htdigest"}, "cory", "pw", false, "^realm must be defined"},
		{"htpasswd apr1", map[string]any{"filename": htpasswd, "filetype": "htpasswd"}, "ann", "secret", true, ""},
		{"htpasswd plaintext", map[string]any{"filename": htpasswd, "filetype": "HTPASSWD"}, "bob", "plain", true, ""},
		{"htpasswd des refused", map[string]any{"filename": htpasswd, "filetype": "htpasswd"}, "ann2", "secret", false, "DES crypt"},
		{"unknown filetype", map[string]any{"filename": plain, "filetype": "ldif"}, "dean", "goneFishing", false, "unknown ^filetype"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := NewFile(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			ok, err := f.Authenticate(ctx, tc.user, tc.pw)
			if ok != tc.want {
				t.Errorf("Authenticate = %v, want %v (err %v)", ok, tc.want, err)
			}
			if tc.errLike == "" && err != nil || tc.errLike != "" && (err == nil || !strings.Contains(err.Error(), tc.errLike)) {
				t.Errorf("err = %v, want one containing %q", err, tc.errLike)
			}
		})
	}
	if _, err := NewFile(map[string]any{}); err == nil || !strings.Contains(err.Error(), "^filename") {
		t.Errorf("NewFile without ^filename: %v", err)
	}
	if _, err := NewFile(map[string]any{"filename": plain, "username_field": "x"}); err == nil {
		t.Error("NewFile with a bad field number: no error")
	}
}

func TestSharedSecret(t *testing.T) {
	ctx := context.Background()
	s := SharedSecret{Secret: "OIUHF", Set: true}
	if ok, _ := s.Authenticate(ctx, "anyone", "OIUHF"); !ok {
		t.Error("the secret was refused")
	}
	if ok, _ := s.Authenticate(ctx, "anyone", "oiuhf"); ok {
		t.Error("a wrong secret was accepted")
	}
	if ok, err := (SharedSecret{}).Authenticate(ctx, "anyone", ""); ok || err == nil {
		t.Errorf("no sharedsecret option: %v, %v; want a refusal with a reason", ok, err)
	}
}

func TestSystemGroups(t *testing.T) {
	g, err := SystemGroups("root")
	if err != nil {
		t.Fatal(err)
	}
	if len(g) == 0 || !slices.Contains(g, "root") {
		t.Errorf("SystemGroups(root) = %v, want its primary group root among them", g)
	}
	if _, err := SystemGroups("no-such-user-brine"); err == nil {
		t.Error("SystemGroups of an unknown user: no error")
	}
}
