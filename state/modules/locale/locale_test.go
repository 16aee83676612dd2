package locale

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
)

const status = `   System Locale: LANG=en_US.UTF-8
                  LC_TIME=de_DE.UTF-8
       VC Keymap: n/a
      X11 Layout: us
`

func fakeRun(outputs map[string]string) func(context.Context, string, ...string) (string, error) {
	return func(_ context.Context, name string, _ ...string) (string, error) {
		out, ok := outputs[name]
		if !ok {
			return "", errors.New(name + " not found")
		}
		return out, nil
	}
}

func TestParseLocalectl(t *testing.T) {
	b, _ := json.Marshal(ParseLocalectl(status))
	if want := `{"system_locale":{"LANG":"en_US.UTF-8","LC_TIME":"de_DE.UTF-8"},"vc_keymap":{"data":null},"x11_layout":{"data":"us"}}`; string(b) != want {
		t.Errorf("got %s", b)
	}
}

func TestGetLocale(t *testing.T) {
	tests := []struct {
		name   string
		files  map[string]string
		family string
		want   any
	}{
		{"systemd", map[string]string{"run/systemd/system/.keep": ""}, "Debian", "en_US.UTF-8"},
		{"debian file", map[string]string{"etc/default/locale": "# x\nLANG=\"fr_FR.UTF-8\"\nLANGUAGE=fr\n"}, "Debian", "fr_FR.UTF-8"},
		{"redhat file", map[string]string{"etc/sysconfig/i18n": "LANG=C\n"}, "RedHat", "C"},
		{"suse file", map[string]string{"etc/sysconfig/language": "RC_LANG=\"de_DE.UTF-8\"\n"}, "Suse", "de_DE.UTF-8"},
		{"missing file", nil, "Debian", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for p, c := range tt.files {
				os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o755)
				os.WriteFile(filepath.Join(root, p), []byte(c), 0o644)
			}
			h := host{root: root, run: fakeRun(map[string]string{"localectl": status})}
			got, err := h.getLocale(context.Background(), ordered.FromPairs("os_family", tt.family))
			if err != nil || got != tt.want {
				t.Errorf("got %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

func TestAvailAndNormalize(t *testing.T) {
	h := host{root: "/", run: fakeRun(map[string]string{"locale": "C\nC.utf8\nen_US.utf8"})}
	list, err := h.listAvail(context.Background())
	if b, _ := json.Marshal(list); err != nil || string(b) != `["C","C.utf8","en_US.utf8"]` {
		t.Errorf("list_avail = %s, %v", b, err)
	}
	for in, want := range map[string]string{"en_us.UTF-8": "en_US.utf8", "ca_ES.UTF-8@valencia UTF-8": "ca_ES.utf8@valencia", "C": "C"} {
		if got := Normalize(in); got != want {
			t.Errorf("Normalize(%q) = %q", in, got)
		}
	}
}

func FuzzParseLocalectl(f *testing.F) {
	f.Add(status)
	f.Fuzz(func(t *testing.T, s string) {
		ParseLocalectl(s)
		Normalize(s)
		firstValue(s, "LANG=")
	})
}
