package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/template"

	"github.com/goreleaser/nfpm/v2"
)

// scriptData is what the maintainer-script and init-script templates
// see.
type scriptData struct {
	Name        string // the package (or service) name
	Description string
	Chkconfig   string
	ShouldStart string
	LogFile     string
	Logs        []string
	Owner       string
	Chown       []string
	Purge       []string
}

// commonPurge is what purging the shared package removes: the shared job
// cache, logs and runtime directories (Salt's salt.postrm clean_common).
var commonPurge = []string{"/var/cache/salt", "/var/log/salt", "/var/run/salt"}

func dataFor(s Spec, f Family) scriptData {
	d := scriptData{Name: s.PackageName(f)}
	if s.Thin {
		d.Purge = commonPurge
	}
	if s.Daemon != nil {
		dm := s.Daemon
		d.Name = s.Name
		d.Description, d.Chkconfig, d.ShouldStart, d.LogFile = dm.Description, dm.Chkconfig, dm.ShouldStart, dm.LogFile
		d.Logs, d.Owner, d.Chown, d.Purge = dm.Logs, dm.Owner, dm.Chown, dm.Purge
	}
	return d
}

// render executes the template file src with d into dst.
func render(src, dst string, d scriptData) error {
	body, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	t, err := template.New(filepath.Base(src)).Option("missingkey=error").
		Funcs(template.FuncMap{"join": strings.Join}).Parse(string(body))
	if err != nil {
		return fmt.Errorf("parse %s: %w", src, err)
	}
	var b bytes.Buffer
	if err := t.Execute(&b, d); err != nil {
		return fmt.Errorf("render %s: %w", src, err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.WriteFile(dst, b.Bytes(), 0o644)
}

// renderInit renders the SysV script of s's daemon into work.
func renderInit(src, work string, s Spec) (string, error) {
	dst := filepath.Join(work, "init", s.Name)
	return dst, render(filepath.Join(src, "sysv", "init.tmpl"), dst, dataFor(s, Deb))
}

// hook names a maintainer script: its template and where nfpm takes it.
type hook struct {
	tmpl string
	set  func(*nfpm.Info, string)
}

var (
	debCommon = []hook{
		{"deb/common.preinst", func(i *nfpm.Info, p string) { i.Scripts.PreInstall = p }},
		{"deb/common.postrm", func(i *nfpm.Info, p string) { i.Scripts.PostRemove = p }},
	}
	debDaemon = []hook{
		{"deb/daemon.postinst", func(i *nfpm.Info, p string) { i.Scripts.PostInstall = p }},
		{"deb/daemon.prerm", func(i *nfpm.Info, p string) { i.Scripts.PreRemove = p }},
		{"deb/daemon.postrm", func(i *nfpm.Info, p string) { i.Scripts.PostRemove = p }},
	}
	rpmCommon = []hook{
		{"rpm/common.pre", func(i *nfpm.Info, p string) { i.Scripts.PreInstall = p }},
	}
	rpmDaemon = []hook{
		{"rpm/daemon.post", func(i *nfpm.Info, p string) { i.Scripts.PostInstall = p }},
		{"rpm/daemon.preun", func(i *nfpm.Info, p string) { i.Scripts.PreRemove = p }},
		{"rpm/daemon.postun", func(i *nfpm.Info, p string) { i.Scripts.PostRemove = p }},
		{"rpm/daemon.posttrans", func(i *nfpm.Info, p string) { i.RPM.Scripts.PostTrans = p }},
	}
)

// setScripts renders t's maintainer scripts into work and names them in
// info: the shared package makes the salt account (and on Debian purges
// the shared directories), a daemon's package registers, restarts and
// unregisters its service. salt-ssh has none.
func setScripts(in Inputs, t Target, work string, info *nfpm.Info) error {
	var hooks []hook
	switch {
	case t.Spec.Thin && t.Family == Deb:
		hooks = debCommon
	case t.Spec.Thin:
		hooks = rpmCommon
	case t.Spec.Daemon != nil && t.Family == Deb:
		hooks = debDaemon
	case t.Spec.Daemon != nil:
		hooks = rpmDaemon
	}
	d := dataFor(t.Spec, t.Family)
	for _, h := range hooks {
		dst := filepath.Join(work, string(t.Family), info.Name, filepath.Base(h.tmpl))
		if err := render(filepath.Join(in.Src, h.tmpl), dst, d); err != nil {
			return err
		}
		h.set(info, dst)
	}
	return nil
}
