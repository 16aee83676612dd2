package main

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Epoch is the packages' version epoch (Debian's "1:", RPM's Epoch: 1).
// Brine's own release numbers are far below Salt's (0.x against 3006),
// and the epoch makes every Brine package newer than any of Salt's of
// the same name, so installing Brine's salt-minion over Salt's is an
// upgrade that keeps conffiles, keys and the salt account, not a
// removal. Going back to Salt is an explicit downgrade.
const Epoch = "1"

// tagPattern is what a release tag looks like: v0.3.0, v1.2.0-rc1.
var tagPattern = regexp.MustCompile(`^v([0-9][0-9A-Za-z.]*)(?:-(rc|alpha|beta)\.?([0-9]+))?$`)

// describe is `git describe --tags --long --match v[0-9]* --dirty` split:
// the tag, the commits since it, the abbreviated hash, and whether the
// tree has changes.
type describe struct {
	Tag   string
	Ahead int
	Hash  string
	Dirty bool
	Count int // commits in HEAD's history, for an untagged tree
}

// PackageVersion turns git's description of the tree into the package
// version (without the epoch), one that sorts in release order under
// both dpkg and rpm:
//
//	v0.3.0 exactly          0.3.0
//	v0.3.0-rc1 exactly      0.3.0~rc1        (before 0.3.0)
//	5 commits after v0.3.0  0.3.0+5.gabc1234 (after 0.3.0, before 0.3.1)
//	no tag at all           0~git42.gabc1234 (42 commits; before any release)
//
// A tree with uncommitted changes gets ".dirty" appended: such packages
// cannot be rebuilt from a commit, and say so.
func PackageVersion(d describe) (string, error) {
	var v string
	if d.Tag == "" {
		v = fmt.Sprintf("0~git%d.g%s", d.Count, d.Hash)
	} else {
		m := tagPattern.FindStringSubmatch(d.Tag)
		if m == nil {
			return "", fmt.Errorf("tag %q: want v<version>, e.g. v0.3.0 or v0.3.0-rc1", d.Tag)
		}
		v = m[1]
		if m[2] != "" {
			v += "~" + m[2] + m[3]
		}
		if d.Ahead > 0 {
			v += fmt.Sprintf("+%d.g%s", d.Ahead, d.Hash)
		}
	}
	if d.Dirty {
		v += ".dirty"
	}
	return v, nil
}

// gitDescribe describes the tree in dir.
func gitDescribe(ctx context.Context, dir string) (describe, error) {
	var d describe
	st, err := git(ctx, dir, "status", "--porcelain", "--untracked-files=no")
	if err != nil {
		return d, err
	}
	d.Dirty = st != ""
	if d.Hash, err = git(ctx, dir, "rev-parse", "--short=7", "HEAD"); err != nil {
		return d, err
	}
	out, err := git(ctx, dir, "describe", "--tags", "--long", "--match", "v[0-9]*", "HEAD")
	if err != nil {
		// No release tag in the history.
		n, cerr := git(ctx, dir, "rev-list", "--count", "HEAD")
		if cerr != nil {
			return d, cerr
		}
		d.Count, err = strconv.Atoi(n)
		return d, err
	}
	// <tag>-<ahead>-g<hash>; the tag itself may contain dashes.
	i := strings.LastIndex(out, "-g")
	j := strings.LastIndex(out[:max(i, 0)], "-")
	if i < 0 || j < 0 {
		return d, fmt.Errorf("git describe: unexpected %q", out)
	}
	d.Tag = out[:j]
	d.Ahead, err = strconv.Atoi(out[j+1 : i])
	return d, err
}

// commitTime is the committer time of HEAD: SOURCE_DATE_EPOCH for every
// file and header of the packages, so a commit always builds the same
// bytes.
func commitTime(ctx context.Context, dir string) (time.Time, error) {
	out, err := git(ctx, dir, "log", "-1", "--format=%ct", "HEAD")
	if err != nil {
		return time.Time{}, err
	}
	n, err := strconv.ParseInt(out, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("commit time %q: %w", out, err)
	}
	return time.Unix(n, 0).UTC(), nil
}

func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(stderr.Bytes()))
	}
	return strings.TrimSpace(string(out)), nil
}
