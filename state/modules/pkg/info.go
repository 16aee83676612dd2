package pkg

import (
	"context"
	"os"
	"regexp"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/modules/pkg/syscmd"
)

// dpkgInfoFormat is dpkg_lowpkg._get_pkg_info's -f format; dpkg-query
// expands the \n escapes and each record ends with a "*/~^\*" line.
const dpkgInfoFormat = `package:${Package}\nrevision:${binary:Revision}\narchitecture:${Architecture}\nmaintainer:${Maintainer}\n` +
	`summary:${Summary}\nsource:${source:Package}\nversion:${Version}\nsection:${Section}\ninstalled_size:${Installed-size}\n` +
	`size:${Size}\nMD5:${MD5sum}\nSHA1:${SHA1}\nSHA256:${SHA256}\norigin:${Origin}\nhomepage:${Homepage}\n` +
	`status:${db:Status-Abbrev}\ndescription:${Description}\n\n*/~^\\*\n`

var recordEnd = regexp.MustCompile(`\r?\n\*/~\^\\\*(\r?\n|)`)

// infoKeys renames dpkg's fields as aptpkg.info_installed does.
var infoKeys = map[string]string{"package": "name", "origin": "vendor", "section": "group", "maintainer": "packager", "homepage": "url"}

// infoInstalled is aptpkg.info_installed over dpkg-query: one mapping per
// installed package. The dselect "available" data and the license are
// not read.
func (m *Module) infoInstalled(ctx context.Context, c *modules.Call) (any, error) {
	j, err := m.newJob(c)
	if err != nil {
		return nil, err
	}
	if _, ok := j.p.(apt); !ok {
		return nil, modules.Errorf("pkg.info_installed is only implemented for apt")
	}
	failhard := true
	if v, ok := c.Kwargs.Get("failhard"); ok {
		failhard = modules.Truthy(v)
	}
	r, err := j.exec(ctx, syscmd.Cmd{Args: append([]string{"dpkg-query", "-W", "-f=" + dpkgInfoFormat}, strArgs(c.VarArgs)...)})
	if err != nil {
		return nil, err
	}
	ret := ordered.New()
	if r.Retcode != 0 {
		if failhard {
			return nil, modules.Errorf("Error getting packages information: %s", r.Stderr)
		}
		return ret, nil
	}
	for _, rec := range recordEnd.Split(r.Stdout, -1) {
		if strings.TrimSpace(rec) == "" {
			continue
		}
		name, info := parseDpkgRecord(rec)
		if info != nil {
			ret.Set(name, info)
		}
	}
	return ret, nil
}

// parseDpkgRecord turns one record into info_installed's mapping; nil
// for a package that is not installed.
func parseDpkgRecord(rec string) (string, *ordered.Map) {
	head, descr, _ := strings.Cut(rec, "\ndescription:")
	out := ordered.New()
	name, status := "", "ii"
	for _, line := range strings.Split(head, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || v == "" || k == "installed_size" {
			continue
		}
		switch k {
		case "status":
			status = v
			continue
		case "package":
			name = v
		}
		if nk, ok := infoKeys[k]; ok {
			k = nk
		}
		out.Set(k, v)
	}
	if len(status) < 2 || status[1] != 'i' {
		return "", nil
	}
	if st, err := os.Stat("/var/lib/dpkg/info/" + name + ".list"); err == nil {
		out.Set("install_date", st.ModTime().UTC().Format("2006-01-02T15:04:05")+"Z")
	}
	out.Set("description", descr)
	return name, out
}
