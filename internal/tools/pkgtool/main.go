// Command pkgtool builds Brine's .deb and .rpm packages and the
// repositories that serve them (`make packages`, `make repo`). It is a
// build tool: no command or daemon links it.
//
//	pkgtool version [-dir .]
//	    the package version git describes (see PackageVersion)
//	pkgtool build -bin bin -out dist [-src packaging] [-arch 'amd64 arm64']
//	        [-thin-arch 'amd64 arm64'] [-packages '...'] [-formats 'deb rpm']
//	        [-version V] [-time UNIX]
//	    one package per spec, family and architecture, in out/deb and
//	    out/rpm; version and time default to git's (SOURCE_DATE_EPOCH wins
//	    over the commit time when set)
//	pkgtool repo -in dist -out dist/repo -key KEY.asc
//	    an APT repository (signed InRelease, Release.gpg) and a YUM
//	    repository (repodata, signed repomd.xml) of the packages in -in
//	pkgtool key -out DIR [-name NAME]
//	    a throwaway signing key: DIR/secret.asc and DIR/public.asc
//
// The packages are split as Salt 3006's (see Specs), carry Salt's
// systemd units, SysV scripts, configs and directories, and are
// reproducible: the same inputs give the same bytes.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: pkgtool version|build|repo|key [flags]")
		return 2
	}
	cmds := map[string]func(context.Context, []string, io.Writer) error{
		"version": cmdVersion, "build": cmdBuild, "repo": cmdRepo, "key": cmdKey,
	}
	cmd, ok := cmds[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "pkgtool: unknown command %q\n", args[0])
		return 2
	}
	if err := cmd(ctx, args[1:], stdout); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 2
		}
		fmt.Fprintf(stderr, "pkgtool %s: %v\n", args[0], err)
		return 1
	}
	return 0
}

func cmdVersion(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	dir := fs.String("dir", ".", "the git tree")
	if err := fs.Parse(args); err != nil {
		return err
	}
	d, err := gitDescribe(ctx, *dir)
	if err != nil {
		return err
	}
	v, err := PackageVersion(d)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, v)
	return nil
}

// allNames is every spec's name, the default of -packages.
func allNames() string {
	names := make([]string, len(Specs))
	for i, s := range Specs {
		names[i] = s.Name
	}
	return strings.Join(names, " ")
}

func cmdBuild(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("build", flag.ContinueOnError)
	var o buildOptions
	fs.StringVar(&o.in.Src, "src", "packaging", "the packaging directory")
	fs.StringVar(&o.in.Bin, "bin", "bin", "the built binaries")
	fs.StringVar(&o.out, "out", "dist", "where the packages go")
	fs.StringVar(&o.archs, "arch", "amd64 arm64", "package architectures")
	fs.StringVar(&o.thinArchs, "thin-arch", "amd64 arm64", "thin binary architectures the shared package carries")
	fs.StringVar(&o.packages, "packages", allNames(), "packages to build (Debian names)")
	fs.StringVar(&o.formats, "formats", "deb rpm", "package formats")
	fs.StringVar(&o.in.Version, "version", "", "package version (default: from git describe)")
	fs.Int64Var(&o.epoch, "time", -1, "file and build time, seconds since 1970 (default: $SOURCE_DATE_EPOCH, else the commit time)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	paths, err := buildAll(ctx, o)
	for _, p := range paths {
		fmt.Fprintln(stdout, p)
	}
	return err
}
