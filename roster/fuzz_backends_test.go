package roster

import (
	"context"
	"errors"
	"testing"
)

// FuzzParseAnsibleINI checks that no INI inventory panics the parser,
// that failures are *Error with the file and a line, and that every host
// of a parsed inventory becomes a target or a located error.
func FuzzParseAnsibleINI(f *testing.F) {
	for _, s := range []string{
		"web1 ansible_host=10.0.0.5 ansible_port=2222\n",
		"[web]\nw[01:03] ansible_user=deploy\n[web:vars]\nx = 'y'\n[all:children]\nweb\n",
		"[a:children]\nb\n[b]\nh:22 k=\"v w\" # comment\n",
		"[a]\nh ansible_become=yes ansible_become_user=pg ansible_ssh_private_key_file=~/.ssh/k\n",
		";c\n#c\n[x:vars]\n[x]\n",
		"[a]\n[::1]:22\nfe80::1\n",
	} {
		f.Add([]byte(s))
	}
	cfg := testConfig()
	f.Fuzz(func(t *testing.T, src []byte) {
		inv, err := ParseAnsibleINI(src, "inv")
		if err != nil {
			var re *Error
			if !errors.As(err, &re) || re.File != "inv" || re.Line < 1 {
				t.Fatalf("error without file and line: %v", err)
			}
			return
		}
		for _, g := range inv.Groups() {
			inv.Hosts(g)
		}
		a, err := NewAnsible(inv, cfg)
		if err != nil {
			for _, e := range Errors(err) {
				if e.File != "inv" || e.Line < 1 {
					t.Fatalf("target error without file and line: %v", e)
				}
			}
			return
		}
		if len(a.Entries) != len(inv.Hosts("all")) {
			t.Fatalf("%d entries for %d hosts", len(a.Entries), len(inv.Hosts("all")))
		}
		if _, err := a.Targets(context.Background(), "*", "glob"); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzSSHConfigHosts checks that no ssh_config text panics the parser or
// the listing, that listed names are plain, and that errors are located.
func FuzzSSHConfigHosts(f *testing.F) {
	for _, s := range []string{
		"Host web1 web2\n  HostName %h.example.com\n  User deploy\n",
		"Host *\n  Port 22\nHost db\n  Port=2222\n  IdentityFile ~/.ssh/id_%r\n",
		"Include conf.d/*\nMatch host a,b\n  User x\nMatch exec \"true\"\n",
		"Host \"quoted name\" !neg pat?\n  ProxyJump j # c\n",
	} {
		f.Add([]byte(s))
	}
	cfg := testConfig()
	f.Fuzz(func(t *testing.T, src []byte) {
		fsys := mapFS{"/h/.ssh/config": string(src)}
		sc, err := ParseSSHConfig("/h/.ssh/config", fsys, "/h")
		if err != nil {
			var re *Error
			if !errors.As(err, &re) || re.File == "" || re.Line < 1 {
				t.Fatalf("error without file and line: %v", err)
			}
			return
		}
		r, err := NewSSHConfigRoster(sc, cfg)
		if err != nil {
			var re *Error
			if !errors.As(err, &re) || re.File == "" || re.Line < 1 {
				t.Fatalf("target error without file and line: %v", err)
			}
			return
		}
		for _, e := range r.Entries {
			if e.ID == "" || e.Target.Host == "" {
				t.Fatalf("empty target %+v", e)
			}
		}
	})
}

// FuzzParseAnsibleYAML is FuzzParseAnsibleINI for the YAML format.
func FuzzParseAnsibleYAML(f *testing.F) {
	for _, s := range []string{
		"all:\n  hosts:\n    a:\n      ansible_host: 10.0.0.1\n  children:\n    g:\n      hosts:\n        b[1:3]:2222:\n      vars: {x: 1}\n",
		"g: ~\nh:\n  children:\n    g:\n",
		"all:\n  hosts: single\n",
		"{\"all\": {\"children\": {\"x\": {\"children\": {\"all\": null}}}}}",
	} {
		f.Add([]byte(s))
	}
	cfg := testConfig()
	f.Fuzz(func(t *testing.T, src []byte) {
		inv, err := ParseAnsibleYAML(src, "inv.yml")
		if err != nil {
			if len(Errors(err)) == 0 {
				t.Fatalf("error is not a roster error: %v", err)
			}
			return
		}
		if _, err := NewAnsible(inv, cfg); err != nil && len(Errors(err)) == 0 {
			t.Fatalf("target error is not a roster error: %v", err)
		}
	})
}
