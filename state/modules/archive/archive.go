// Package archive is Salt's archive execution module
// (salt/modules/archive.py): tar through tar(1), listing tar and zip
// archives, and zip/unzip natively with archive/zip (Salt's zipfile-based
// zip_ and unzip).
//
// Differences from Salt: template= and runas= are not supported (an
// error when set); list reads local paths, file:// and salt:// URLs (no
// http sources, so use_etag, which only http sources have, has nothing to
// act on; a source_hash is checked against a local archive, which Salt
// does not do); rar archives
// are not supported; xz-compressed tars are listed through xz(1).
// unzip refuses members whose paths climb out of dest, as Python's
// zipfile sanitises them.
package archive

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
)

func req(name string) modules.Param { return modules.Param{Name: name} }

func opt(name string, def any) modules.Param {
	return modules.Param{Name: name, Default: def, Optional: true}
}

func reg(name, doc string, fn modules.Func, p ...modules.Param) {
	modules.Register(modules.Function{Name: "archive." + name, Doc: doc, Spec: modules.Spec{Params: p}, Fn: fn})
}

func init() {
	reg("tar", "Run tar with options on tarfile, adding sources (comma list or list, globs allowed) or extracting into dest; returns tar's output lines.",
		tarFn, req("options"), req("tarfile"), opt("sources", nil), opt("dest", nil), opt("cwd", nil), opt("template", nil), opt("runas", nil))
	reg("list", "List a tar or zip archive's members (directories end in /); verbose=True gives {dirs, files, links, top_level_dirs, top_level_files, top_level_links}.",
		listFn, req("name"), opt("archive_format", nil), opt("options", nil), opt("strip_components", nil), opt("clean", false),
		opt("verbose", false), opt("saltenv", "base"), opt("source_hash", nil), opt("use_etag", false))
	reg("zip", "Create zip_file from sources (comma list or list, globs allowed; relative paths need cwd); returns the archived names.",
		zipFn, req("zip_file"), req("sources"), opt("template", nil), opt("cwd", nil), opt("runas", nil), opt("zip64", false))
	reg("unzip", "Extract zip_file into dest, except excludes; returns the extracted names (trim_output limits the list).",
		unzipFn, req("zip_file"), req("dest"), opt("excludes", nil), opt("options", nil), opt("template", nil), opt("runas", nil),
		opt("trim_output", false), opt("password", nil), opt("extract_perms", true))
	reg("is_encrypted", "Report whether the zip archive name has encrypted members.", isEncrypted,
		req("name"), opt("clean", false), opt("saltenv", "base"), opt("source_hash", nil), opt("use_etag", false))
	reg("gzip", "Compress sourcefile with gzip; returns gzip's output lines.", func(ctx context.Context, c *modules.Call) (any, error) {
		return gz(ctx, c, "gzip", c.Str("sourcefile"))
	}, req("sourcefile"), opt("template", nil), opt("runas", nil), opt("options", nil))
	reg("gunzip", "Decompress gzipfile with gunzip; returns gunzip's output lines.", func(ctx context.Context, c *modules.Call) (any, error) {
		return gz(ctx, c, "gunzip", c.Str("gzipfile"))
	}, req("gzipfile"), opt("template", nil), opt("runas", nil), opt("options", nil))
}

func unsupported(c *modules.Call) error {
	for _, k := range []string{"template", "runas"} {
		if v, ok := c.Args[k]; ok && v != nil {
			return modules.Errorf("archive: %s is not supported by Brine", k)
		}
	}
	return nil
}

var globChars = regexp.MustCompile(`[*?[]`)

// expandSources is _expand_sources: a comma list or list of paths, each
// glob expanded (an unmatched glob contributes nothing).
func expandSources(sources any) []string {
	var list []string
	switch s := sources.(type) {
	case nil:
		return nil
	case string:
		for _, x := range strings.Split(s, ",") {
			list = append(list, strings.TrimSpace(x))
		}
	case []any:
		for _, x := range s {
			list = append(list, ordered.KeyString(x))
		}
	default:
		list = []string{ordered.KeyString(s)}
	}
	var out []string
	for _, p := range list {
		if !globChars.MatchString(p) {
			out = append(out, p)
			continue
		}
		m, _ := filepath.Glob(p)
		out = append(out, m...)
	}
	return out
}

// runLines runs a command as cmd.run does (stderr merged, trailing
// newline removed) and returns its output lines.
func runLines(ctx context.Context, dir string, argv ...string) ([]any, error) {
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return nil, modules.Errorf("Unable to run command '%s' with the context '%s', reason: command not found", argv[0], argv[0])
	}
	cmd := exec.CommandContext(ctx, path, argv[1:]...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		return nil, modules.Errorf("run %s: %w", argv[0], err)
	}
	lines := []any{}
	text := strings.TrimRight(string(out), "\n")
	if text == "" {
		return lines, nil
	}
	for _, l := range strings.Split(text, "\n") {
		lines = append(lines, l)
	}
	return lines, nil
}

func tarFn(ctx context.Context, c *modules.Call) (any, error) {
	if err := unsupported(c); err != nil {
		return nil, err
	}
	opts := c.Str("options")
	if opts == "" {
		return nil, modules.Invalidf("Tar options can not be empty")
	}
	argv := append([]string{"tar"}, strings.Fields(opts)...)
	argv = append(argv, c.Str("tarfile"))
	argv = append(argv, expandSources(c.Arg("sources"))...)
	if modules.Truthy(c.Arg("dest")) {
		argv = append(argv, "-C", c.Str("dest"))
	}
	return runLines(ctx, c.Str("cwd"), argv...)
}

func gz(ctx context.Context, c *modules.Call, tool, file string) (any, error) {
	if err := unsupported(c); err != nil {
		return nil, err
	}
	argv := []string{tool}
	if modules.Truthy(c.Arg("options")) {
		argv = append(argv, strings.Fields(c.Str("options"))...)
	}
	return runLines(ctx, "", append(argv, file)...)
}

// GuessFormat is salt.utils.files.guess_archive_type: tar, zip, rar or
// "" by file extension.
func GuessFormat(name string) string {
	name = strings.ToLower(name)
	for _, ext := range []string{"tar", "tar.gz", "tgz", "tar.bz2", "tbz2", "tbz", "tar.xz", "txz", "tar.lzma", "tlz"} {
		if strings.HasSuffix(name, "."+ext) {
			return "tar"
		}
	}
	for _, ext := range []string{"zip", "rar"} {
		if strings.HasSuffix(name, "."+ext) {
			return ext
		}
	}
	return ""
}
