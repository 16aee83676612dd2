package grainsyaml

import (
	"testing"

	"github.com/brinesalt/brine/internal/saltyaml"
)

func FuzzDecodeYAML(f *testing.F) {
	f.Add("roles: [web, db]\nmode: 0755\nx: yes\n")
	f.Add("- a\n- {b: c}\n")
	f.Fuzz(func(t *testing.T, doc string) {
		v, err := decode([]byte(doc))
		if err != nil {
			return
		}
		if _, err := saltyaml.Dump(v, saltyaml.DumpOptions{}); err != nil {
			t.Fatalf("encode decoded value: %v", err)
		}
	})
}
