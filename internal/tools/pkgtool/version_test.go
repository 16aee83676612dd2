package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
)

func TestPackageVersion(t *testing.T) {
	cases := []struct {
		d    describe
		want string
	}{
		{describe{Tag: "v0.3.0"}, "0.3.0"},
		{describe{Tag: "v0.3.0-rc1"}, "0.3.0~rc1"},
		{describe{Tag: "v0.3.0", Ahead: 5, Hash: "abc1234"}, "0.3.0+5.gabc1234"},
		{describe{Count: 42, Hash: "abc1234"}, "0~git42.gabc1234"},
		{describe{Tag: "v1.2.0", Dirty: true}, "1.2.0.dirty"},
	}
	for _, c := range cases {
		got, err := PackageVersion(c.d)
		if err != nil || got != c.want {
			t.Errorf("PackageVersion(%+v) = %q, %v; want %q", c.d, got, err, c.want)
		}
	}
	if _, err := PackageVersion(describe{Tag: "release-3"}); err == nil {
		t.Error("a tag that is no version: no error")
	}
}

// TestVersionsSort checks with dpkg and rpm themselves that the versions
// sort in release order: untagged < rc < release < commits after it <
// the next release.
func TestVersionsSort(t *testing.T) {
	order := []string{"0~git42.gabc1234", "0.3.0~rc1", "0.3.0", "0.3.0+5.gabc1234", "0.3.1"}
	for i := 0; i+1 < len(order); i++ {
		a, b := order[i], order[i+1]
		if _, err := exec.LookPath("dpkg"); err == nil {
			if err := exec.Command("dpkg", "--compare-versions", a, "lt", b).Run(); err != nil {
				t.Errorf("dpkg: %s is not before %s", a, b)
			}
		}
		if _, err := exec.LookPath("rpm"); err == nil {
			out, err := exec.Command("rpm", "--eval", `%{lua: print(rpm.vercmp("`+a+`", "`+b+`"))}`).Output()
			if err != nil || string(out) != "-1\n" {
				t.Errorf("rpm: vercmp(%s, %s) = %q, %v; want -1", a, b, out, err)
			}
		}
	}
	// Salt's releases < anySalt (the bound of the Breaks, Replaces and
	// Obsoletes against them) < every Brine version, untagged ones too.
	for _, pair := range [][2]string{{"3006.19", anySalt}, {"3007.8-0", anySalt}, {anySalt, Epoch + ":" + order[0]}} {
		if err := exec.Command("dpkg", "--compare-versions", pair[0], "lt", pair[1]).Run(); err != nil {
			t.Errorf("dpkg: %s is not before %s", pair[0], pair[1])
		}
		out, err := exec.Command("rpm", "--eval", `%{lua: print(rpm.vercmp("`+pair[0]+`", "`+pair[1]+`"))}`).Output()
		if err != nil || string(out) != "-1\n" {
			t.Errorf("rpm: vercmp(%s, %s) = %q, %v; want -1", pair[0], pair[1], out, err)
		}
	}
}

// TestGitDescribe describes real repositories: no tag, a tag, commits
// after it, and changes not committed.
func TestGitDescribe(t *testing.T) {
	dir := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t",
			"GIT_COMMITTER_EMAIL=t@t", "GIT_COMMITTER_DATE=1700000000 +0000", "GIT_AUTHOR_DATE=1700000000 +0000")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	version := func() string {
		t.Helper()
		d, err := gitDescribe(t.Context(), dir)
		if err != nil {
			t.Fatal(err)
		}
		v, err := PackageVersion(d)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	git("init", "-q")
	os.WriteFile(filepath.Join(dir, "f"), []byte("1"), 0o644)
	git("add", "f")
	git("commit", "-qm", "one")
	if v := version(); !matches(v, `^0~git1\.g[0-9a-f]{7}$`) {
		t.Errorf("untagged: %q", v)
	}
	git("tag", "v0.4.0")
	if v := version(); v != "0.4.0" {
		t.Errorf("tagged: %q", v)
	}
	os.WriteFile(filepath.Join(dir, "f"), []byte("2"), 0o644)
	if v := version(); v != "0.4.0.dirty" {
		t.Errorf("dirty: %q", v)
	}
	git("commit", "-qam", "two")
	if v := version(); !matches(v, `^0\.4\.0\+1\.g[0-9a-f]{7}$`) {
		t.Errorf("one commit after the tag: %q", v)
	}
	if at, err := commitTime(t.Context(), dir); err != nil || at.Unix() != 1700000000 {
		t.Errorf("commit time = %v, %v", at, err)
	}
}

func matches(s, pattern string) bool { return regexp.MustCompile(pattern).MatchString(s) }
