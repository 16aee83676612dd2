package eauth

import (
	"testing"

	"golang.org/x/crypto/bcrypt"
)

// The hashes are what `openssl passwd` (-apr1, -1, -5, -6) and Apache's
// htpasswd (-B) print for the password "secret".
func TestVerifyHtpasswd(t *testing.T) {
	for _, tc := range []struct {
		hash string
		ok   bool
	}{
		{"$apr1$abcdefgh$h9FWgUz3n9YxylKLlR5SQ/", true},
		{"$1$saltsalt$9xy1btjgzLYfb7hivXtC//", true},
		{"$5$saltsaltsaltsalt$X0ra9qlY7TJaGBDgorLevriQfwysW8fXnbybcO4mF4/", true},
		{"$6$rounds=1000$xy$c9aXEsVGfLfUXt7tNYgM8d4iUrfqossx9C6Q0lksBwt04R/fUyK79e5lpuuHo8JyyXN8zM.pcrz3C2PpYGRDA/", true},
		{"$apr1$abcdefgh$h9FWgUz3n9YxylKLlR5SQ.", false},
		{"{SHA}5en6G6MezRroT3XKqkdPOmY/BfQ=", true},
		{"{SHA}5en6G6MezRroT3XKqkdPOmY/BfQ", false},
		{"secret", true},
		{"Secret", false},
	} {
		ok, err := verifyHtpasswd(tc.hash, "secret")
		if err != nil || ok != tc.ok {
			t.Errorf("verifyHtpasswd(%q) = %v, %v; want %v", tc.hash, ok, err, tc.ok)
		}
	}
	for _, h := range []string{"abJnggxhB/yWI", "$9$x$y"} {
		if ok, err := verifyHtpasswd(h, "secret"); ok || err == nil {
			t.Errorf("verifyHtpasswd(%q) = %v, %v; want a refusal with a reason", h, ok, err)
		}
	}
}

// Apache's htpasswd -B writes $2y$, which passlib and Brine take as
// bcrypt.
func TestVerifyHtpasswdBcrypt(t *testing.T) {
	h, err := bcrypt.GenerateFromPassword([]byte("secret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	for _, prefix := range []string{"$2a$", "$2b$", "$2y$"} {
		stored := prefix + string(h[4:])
		for pw, want := range map[string]bool{"secret": true, "secreT": false} {
			if ok, err := verifyHtpasswd(stored, pw); ok != want || err != nil {
				t.Errorf("%s with %q = %v, %v; want %v", stored, pw, ok, err, want)
			}
		}
	}
}

func TestSHA512Crypt(t *testing.T) {
	h := SHA512Crypt("secret", "xy")
	if ok, err := verifyHtpasswd(h, "secret"); !ok || err != nil || h[:6] != "$6$xy$" {
		t.Errorf("SHA512Crypt = %s (%v, %v)", h, ok, err)
	}
}
