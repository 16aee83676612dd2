package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// buildOptions are pkgtool build's flags.
type buildOptions struct {
	in                    Inputs
	out, archs, thinArchs string
	packages, formats     string
	epoch                 int64
}

// buildAll builds every selected package and returns their paths. Every
// package is attempted; the errors of those that failed are joined.
func buildAll(ctx context.Context, o buildOptions) ([]string, error) {
	in := o.in
	in.ThinArchs = strings.Fields(o.thinArchs)
	if err := settle(ctx, &in, o.epoch); err != nil {
		return nil, err
	}
	targets, err := selectTargets(o.packages, o.formats, o.archs)
	if err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("", "pkgtool-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	var paths []string
	var errs []error
	for _, t := range targets {
		p, err := Build(in, t, filepath.Join(o.out, string(t.Family)), filepath.Join(work, t.Arch))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		paths = append(paths, p)
	}
	if len(errs) > 0 {
		return paths, fmt.Errorf("%d of %d packages not built:\n%w", len(errs), len(targets), joinLines(errs))
	}
	return paths, nil
}

// settle fills in the version and time from git where not given.
// SOURCE_DATE_EPOCH, when set, is the time; else HEAD's commit time.
func settle(ctx context.Context, in *Inputs, epoch int64) error {
	dir := filepath.Dir(in.Src)
	if in.Version == "" {
		d, err := gitDescribe(ctx, dir)
		if err != nil {
			return fmt.Errorf("version: %w", err)
		}
		if in.Version, err = PackageVersion(d); err != nil {
			return err
		}
	}
	if epoch < 0 {
		if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return fmt.Errorf("SOURCE_DATE_EPOCH=%q: %w", s, err)
			}
			epoch = n
		}
	}
	if epoch >= 0 {
		in.Time = time.Unix(epoch, 0).UTC()
		return nil
	}
	t, err := commitTime(ctx, dir)
	in.Time = t
	return err
}

// selectTargets expands the space-separated names, formats and
// architectures into targets, refusing unknown ones.
func selectTargets(packages, formats, archs string) ([]Target, error) {
	var out []Target
	for _, f := range strings.Fields(formats) {
		if !slices.Contains(Families, Family(f)) {
			return nil, fmt.Errorf("format %q: want deb or rpm", f)
		}
		for _, name := range strings.Fields(packages) {
			s, ok := SpecByName(name)
			if !ok {
				return nil, fmt.Errorf("package %q: want one of %s", name, allNames())
			}
			for _, a := range strings.Fields(archs) {
				out = append(out, Target{Spec: s, Family: Family(f), Arch: a})
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("nothing to build")
	}
	return out, nil
}

type lineErrors []error

func (e lineErrors) Error() string {
	s := make([]string, len(e))
	for i, err := range e {
		s[i] = "  " + err.Error()
	}
	return strings.Join(s, "\n")
}

func (e lineErrors) Unwrap() []error { return e }

func joinLines(errs []error) error { return lineErrors(errs) }
