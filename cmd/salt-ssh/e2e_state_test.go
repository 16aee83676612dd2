package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brinesalt/brine/internal/testsupport/testhosts"
)

// writeTree writes files (slash paths relative to dir) for a test.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestE2EStateApplyAndPillarPrivacy runs state.apply over salt-ssh: SLS
// rendered on the controller with each host's grains and pillar, a
// salt:// source and a template shipped, and each host's pillar secret
// reaching that host alone.
func TestE2EStateApplyAndPillarPrivacy(t *testing.T) {
	c := testhosts.New(t, 2)
	e := newEnv(t, c, true)
	srv := t.TempDir()
	writeTree(t, srv, map[string]string{
		"salt/top.sls": "base:\n  '*':\n    - app\n",
		"salt/app/init.sls": `
app-dir:
  file.directory:
    - name: /var/tmp/app
config:
  file.managed:
    - name: /var/tmp/app/config
    - source: salt://app/config.j2
    - template: jinja
    - context:
        greeting: hello
    - require:
      - file: app-dir
secret:
  file.managed:
    - name: /var/tmp/app/secret
    - contents: {{ pillar['secret'] }}
    - mode: 600
static:
  file.managed:
    - name: /var/tmp/app/static.bin
    - source: salt://app/static.bin
big:
  file.managed:
    - name: /var/tmp/app/big.bin
    - source: salt://app/big.bin
{% if grains['id'] == 'host1' %}
only-on-host1:
  cmd.run:
    - name: touch /var/tmp/app/host1-was-here
    - creates: /var/tmp/app/host1-was-here
{% endif %}
`,
		"salt/app/config.j2":  "{{ greeting }} from {{ grains['id'] }} ({{ grains['os_family'] }})\n",
		"salt/app/static.bin": "\x00\x01binary\xff",
		"salt/app/big.bin":    strings.Repeat("0123456789abcdef", 40<<10), // 640 KiB: sent once to the content cache
		"pillar/top.sls":      "base:\n  host1:\n    - one\n  host2:\n    - two\n",
		"pillar/one.sls":      "secret: s3cret-for-host1-only\n",
		"pillar/two.sls":      "secret: s3cret-for-host2-only\n",
	})
	e.writeMaster(fmt.Sprintf("file_roots:\n  base:\n    - %s/salt\npillar_roots:\n  base:\n    - %s/pillar\n", srv, srv))

	got, code, stderr := e.saltSSH("*", "state.apply")
	if code != 0 || len(got) != 2 {
		t.Fatalf("state.apply: code %d, %v\n%s", code, got, stderr)
	}
	for id, want := range map[string]int{"host1": 6, "host2": 5} {
		states, _ := got[id].(map[string]any)
		if len(states) != want {
			t.Errorf("%s ran %d states, want %d: %v", id, len(states), want, states)
		}
		for tag, v := range states {
			if r, _ := v.(map[string]any); r["result"] != true {
				t.Errorf("%s %s: %v", id, tag, r)
			}
		}
	}
	ctx := context.Background()
	read := func(id, p string) string {
		out, err := c.Exec(ctx, id, "cat "+p)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		return string(out)
	}
	if s := read("host2", "/var/tmp/app/config"); s != "hello from host2 (Debian)\n" {
		t.Errorf("templated config on host2 = %q", s)
	}
	if s := read("host1", "/var/tmp/app/static.bin"); s != "\x00\x01binary\xff" {
		t.Errorf("binary source on host1 = %q", s)
	}
	if s := read("host1", "/var/tmp/app/secret"); strings.TrimSpace(s) != "s3cret-for-host1-only" {
		t.Errorf("host1 secret = %q", s)
	}
	// host1's secret is nowhere on host2: not in its results, not on its
	// disks (thin_dir, /tmp, /var/tmp, /etc/salt, homes).
	out, _ := json.Marshal(got["host2"])
	if strings.Contains(string(out), "host1-only") {
		t.Errorf("host1's pillar reached host2's result")
	}
	if leak, _ := c.Exec(ctx, "host2", "grep -rl s3cret-for-host1-only /var/tmp /tmp /etc/salt /root /home 2>/dev/null || true"); strings.TrimSpace(string(leak)) != "" {
		t.Errorf("host1's secret found on host2 in %s", leak)
	}
	// No pillar stays behind in thin_dir on the host it was meant for.
	if leak, _ := c.Exec(ctx, "host1", "grep -rl s3cret-for-host1-only /var/tmp/.brine_*_salt /tmp 2>/dev/null || true"); strings.TrimSpace(string(leak)) != "" {
		t.Errorf("host1's pillar left on its disk in %s", leak)
	}

	if s := read("host2", "/var/tmp/app/big.bin"); len(s) != 640<<10 {
		t.Errorf("big file on host2 has %d bytes", len(s))
	}
	cacheInode := func() string {
		out, err := c.Exec(ctx, "host1", "ls -i /var/tmp/.brine_*_salt/files/")
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	before := cacheInode()

	// Second run: nothing changes, and the big file is not sent again.
	got, code, _ = e.saltSSH("*", "state.apply")
	if after := cacheInode(); after != before || !strings.Contains(before, " ") {
		t.Errorf("content cache changed on an unchanged run: %q -> %q", before, after)
	}
	for id, v := range got {
		for tag, s := range v.(map[string]any) {
			if r := s.(map[string]any); len(r["changes"].(map[string]any)) != 0 {
				t.Errorf("second run changed %s %s: %v", id, tag, r["changes"])
			}
		}
	}
	if code != 0 {
		t.Errorf("second run code %d", code)
	}
	// test=True predicts without changing; show_sls answers on the controller.
	got, _, _ = e.saltSSH("host2", "state.show_sls", "app")
	if _, ok := got["host2"].(map[string]any)["config"]; !ok {
		t.Errorf("show_sls = %v", got)
	}
}
