package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/brinesalt/brine/bench/stateapply/sshside"
)

const (
	templates = 16
	commands  = 3
)

// template is one configuration file, the same Jinja for both tools but
// for how it names the host's short name: a grain in Salt, a fact in
// Ansible.
func template(i int, hostVar string) string {
	return fmt.Sprintf(`# managed by the stateapply benchmark; do not edit
[service]
name = app%[1]d
host = {{ %[2]s }}
port = {{ 8000 + %[1]d }}
{%% for n in range(20) %%}
worker{{ n }} = {{ %[2]s }}:{{ 9000 + n }}
{%% endfor %%}
`, i, hostVar)
}

// command is the i-th one-time initialisation, guarded by creates.
func command(i int) (cmd, creates string) {
	creates = fmt.Sprintf("%s/app/.init%d", target, i)
	return fmt.Sprintf("sh -c 'cat %s/app/conf%d.conf > %s'", target, i, creates), creates
}

// writeInputs writes the SLS app/init.sls with its templates into the
// salt:// root and the playbook with its own copy of the templates, and
// returns the playbook's path.
func writeInputs(e *sshside.Env) (string, error) {
	sls, play := slsText(), playbookText()
	ansibleDir := filepath.Join(e.Work, "ansible")
	files := map[string]string{
		filepath.Join(e.FileRoot, "app", "init.sls"): sls,
		filepath.Join(ansibleDir, "site.yml"):        play,
	}
	for i := range templates {
		files[filepath.Join(e.FileRoot, "app", "templates", fmt.Sprintf("conf%d.j2", i))] = template(i, "grains['host']")
		files[filepath.Join(ansibleDir, "templates", fmt.Sprintf("conf%d.j2", i))] = template(i, "ansible_facts['hostname']")
	}
	for path, body := range files {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			return "", err
		}
	}
	return filepath.Join(ansibleDir, "site.yml"), nil
}

func slsText() string {
	var b strings.Builder
	fmt.Fprintf(&b, "app_dir:\n  file.directory:\n    - name: %s/app\n    - mode: '0755'\n    - makedirs: True\n", target)
	for i := range templates {
		fmt.Fprintf(&b, "conf%d:\n  file.managed:\n    - name: %s/app/conf%d.conf\n    - source: salt://app/templates/conf%d.j2\n", i, target, i, i)
		b.WriteString("    - template: jinja\n    - mode: '0644'\n    - require:\n      - file: app_dir\n")
	}
	for i := range commands {
		cmd, creates := command(i)
		fmt.Fprintf(&b, "init%d:\n  cmd.run:\n    - name: %q\n    - creates: %s\n    - require:\n      - file: conf%d\n", i, cmd, creates, i)
	}
	return b.String()
}

func playbookText() string {
	var b strings.Builder
	b.WriteString("- hosts: all\n  tasks:\n")
	fmt.Fprintf(&b, "    - name: app_dir\n      ansible.builtin.file:\n        path: %s/app\n        state: directory\n        mode: '0755'\n", target)
	for i := range templates {
		fmt.Fprintf(&b, "    - name: conf%d\n      ansible.builtin.template:\n        src: templates/conf%d.j2\n        dest: %s/app/conf%d.conf\n        mode: '0644'\n", i, i, target, i)
	}
	for i := range commands {
		cmd, creates := command(i)
		fmt.Fprintf(&b, "    - name: init%d\n      ansible.builtin.command:\n        cmd: %q\n        creates: %s\n", i, cmd, creates)
	}
	return b.String()
}
