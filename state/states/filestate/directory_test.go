package filestate

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/testsupport/testhosts"
	"github.com/brinesalt/brine/state/states"
)

func TestDirectory(t *testing.T) {
	h := newHarness(t)
	d, deep, orphan := h.p("d"), h.p("a/b/c"), h.p("no-parents/x")
	h.check(
		step{"file.directory", true, []any{"name", d}, states.None,
			"The following files will be changed:\n" + d + ": directory - new\n", `{"` + d + `":{"directory":"new"}}`},
		step{"file.directory", false, []any{"name", d}, states.True, "", `{"` + d + `":{"directory":"new"}}`},
		step{"file.directory", false, []any{"name", d + "/"}, states.True, "The directory " + d + " is in the correct state", `{}`},
		step{"file.directory", false, []any{"name", d, "mode", 700}, states.True, "Directory " + d + " updated", `{"` + d + `":{"mode":"0700"},"mode":"0700"}`},
		step{"file.directory", true, []any{"name", d, "mode", 755}, states.None, "", `{"` + d + `":{"mode":"0755"}}`},
		step{"file.directory", false, []any{"name", deep, "makedirs", true, "mode", "0750"}, states.True, "", `{"` + deep + `":{"directory":"new"}}`},
		// notes item 35: the changes stay although the result is false.
		step{"file.directory", false, []any{"name", orphan}, states.False, "No directory to create " + orphan + " in",
			`{"` + orphan + `":{"directory":"new"}}`},
		step{"file.directory", false, []any{"name", "relative"}, states.False, "Specified file relative is not an absolute path", ""},
	)
	for _, p := range []string{"a", "a/b", "a/b/c"} {
		if m := modeOf(t, h.p(p)); m != "0750" {
			t.Errorf("%s mode = %s, want 0750 (makedirs applies mode to parents)", p, m)
		}
	}
	f := h.p("file")
	writeFile(t, f, "x", 0o644)
	h.check(step{"file.directory", false, []any{"name", f}, states.False, "Specified location " + f + " exists and is a file", ""})
}

func TestDirectoryRecurseAndClean(t *testing.T) {
	h := newHarness(t)
	d := h.p("tree")
	writeFile(t, h.p("tree/a.txt"), "a", 0o600)
	writeFile(t, h.p("tree/sub/b.txt"), "b", 0o600)
	if err := os.Chmod(h.p("tree/sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(d, 0o755); err != nil {
		t.Fatal(err)
	}
	h.check(
		step{"file.directory", true, []any{"name", d, "dir_mode", 755, "file_mode", 644, "recurse", []any{"mode"}}, states.None, "",
			// os.walk order: a root's files, then its directories.
			`{"` + h.p("tree/a.txt") + `":{"mode":"0644"},"` + h.p("tree/sub") + `":{"mode":"0755"},"` + h.p("tree/sub/b.txt") + `":{"mode":"0644"}}`},
		step{"file.directory", false, []any{"name", d, "dir_mode", 755, "file_mode", 644, "recurse", []any{"mode"}}, states.True,
			"Directory " + d + " updated",
			`{"` + h.p("tree/a.txt") + `":{"mode":"0644"},"` + h.p("tree/sub") + `":{"mode":"0755"},"` + h.p("tree/sub/b.txt") + `":{"mode":"0644"},"mode":"0644"}`},
		step{"file.directory", false, []any{"name", d, "dir_mode", 755, "file_mode", 644, "recurse", []any{"mode"}}, states.True,
			"The directory " + d + " is in the correct state", `{}`},
		step{"file.directory", false, []any{"name", d, "recurse", []any{"bogus"}}, states.False,
			`Types for "recurse" limited to "user", "group", "mode", "ignore_files", "ignore_dirs", "silent".`, ""},
		step{"file.directory", true, []any{"name", d, "clean", true, "require", []any{map1("file", h.p("tree/a.txt"))}}, states.None, "",
			`{"` + h.p("tree/sub") + `":{"removed":"Removed due to clean"},"` + h.p("tree/sub/b.txt") + `":{"removed":"Removed due to clean"}}`},
		step{"file.directory", false, []any{"name", d, "clean", true, "require", []any{map1("file", h.p("tree/a.txt"))}}, states.True,
			"Files cleaned from directory " + d,
			`{"` + h.p("tree/sub") + `":{"removed":"Removed due to clean"},"` + h.p("tree/sub/b.txt") + `":{"removed":"Removed due to clean"},` +
				`"removed":["` + h.p("tree/sub") + `","` + h.p("tree/sub/b.txt") + `"]}`},
	)
	if m := modeOf(t, h.p("tree/a.txt")); m != "0644" {
		t.Errorf("recursed file mode = %s", m)
	}
	if pathExists(h.p("tree/sub")) || !pathExists(h.p("tree/a.txt")) {
		t.Errorf("clean removed the wrong files")
	}
}

func TestAbsentExistsMissing(t *testing.T) {
	h := newHarness(t)
	f, d := h.p("f"), h.p("d")
	writeFile(t, f, "x", 0o644)
	writeFile(t, h.p("d/inner"), "x", 0o644)
	h.check(
		step{"file.exists", false, []any{"name", f}, states.True, "Path " + f + " exists", `{}`},
		step{"file.missing", false, []any{"name", f}, states.False, "Specified path " + f + " exists", `{}`},
		step{"file.absent", true, []any{"name", f}, states.None, "File " + f + " is set for removal", `{"removed":"` + f + `"}`},
		step{"file.absent", false, []any{"name", f}, states.True, "Removed file " + f, `{"removed":"` + f + `"}`},
		step{"file.absent", false, []any{"name", f}, states.True, "File " + f + " is not present", `{}`},
		step{"file.absent", true, []any{"name", d}, states.None, "Directory " + d + " is set for removal", ""},
		step{"file.absent", false, []any{"name", d}, states.True, "Removed directory " + d, `{"removed":"` + d + `"}`},
		step{"file.absent", false, []any{"name", "/"}, states.False, `Refusing to make "/" absent`, ""},
		step{"file.exists", false, []any{"name", f}, states.False, "Specified path " + f + " does not exist", `{}`},
		step{"file.missing", false, []any{"name", f}, states.True, "Path " + f + " is missing", `{}`},
	)
}

func TestSymlinkTouchCopy(t *testing.T) {
	h := newHarness(t)
	target, link := h.p("target"), h.p("links/l")
	writeFile(t, target, "t\n", 0o640)
	h.check(
		step{"file.symlink", true, []any{"name", link, "target", target}, states.None,
			"Symlink " + link + " to " + target + " is set for creation\nDirectory " + h.p("links") + " for symlink is not present", `{"new":"` + link + `"}`},
		step{"file.symlink", false, []any{"name", link, "target", target}, states.False,
			"Directory " + h.p("links") + " for symlink is not present", ""},
		step{"file.symlink", false, []any{"name", link, "target", target, "makedirs", true}, states.True,
			"Created new symlink " + link + " -> " + target, `{"new":"` + link + `"}`},
		step{"file.symlink", true, []any{"name", link, "target", target}, states.True, "The symlink " + link + " is present", `{}`},
		step{"file.symlink", true, []any{"name", link, "target", "/elsewhere"}, states.None,
			"Link " + link + " target is set to be changed to /elsewhere", `{"change":"` + link + `"}`},
		step{"file.symlink", false, []any{"name", link, "target", "/elsewhere"}, states.True,
			"Created new symlink " + link + " -> /elsewhere", `{"new":"` + link + `"}`},
		step{"file.symlink", false, []any{"name", target, "target", "/x"}, states.False,
			"File exists where the symlink " + target + " should be", ""},
	)
	tf := h.p("touched")
	h.check(
		step{"file.touch", true, []any{"name", tf}, states.None, "File " + tf + " is set to be created", `{"new":"` + tf + `"}`},
		step{"file.touch", false, []any{"name", tf}, states.True, "Created empty file " + tf, `{"new":"` + tf + `"}`},
		step{"file.touch", false, []any{"name", tf, "mtime", 86400}, states.True, "Updated times on file " + tf, `{"touched":"` + tf + `"}`},
		step{"file.touch", false, []any{"name", h.p("no/dir/x")}, states.False, "Directory not present to touch file " + h.p("no/dir/x"), ""},
	)
	if st, _ := os.Stat(tf); st.ModTime().Unix() != 86400 {
		t.Errorf("mtime = %v", st.ModTime())
	}
	dst := h.p("copies/c")
	h.check(
		step{"file.copy", false, []any{"name", dst, "source", target}, states.False, "The target directory " + h.p("copies") + " is not present", ""},
		step{"file.copy", true, []any{"name", dst, "source", target, "makedirs", true}, states.None,
			`File "` + target + `" is set to be copied to "` + dst + `"`, `{}`},
		step{"file.copy", false, []any{"name", dst, "source", target, "makedirs", true}, states.True,
			`Copied "` + target + `" to "` + dst + `"`, `{"` + dst + `":"` + target + `"}`},
		step{"file.copy", false, []any{"name", dst, "source", target}, states.True,
			`The target file "` + dst + `" exists and will not be overwritten`, `{}`},
		step{"file.copy", false, []any{"name", dst, "source", h.p("nope")}, states.False, `Source file "` + h.p("nope") + `" is not present`, ""},
	)
	if readFile(t, dst) != "t\n" || modeOf(t, dst) != "0640" {
		t.Errorf("copy: %q %s", readFile(t, dst), modeOf(t, dst))
	}
}

func TestRename(t *testing.T) {
	h := newHarness(t)
	src, dst := h.p("old"), h.p("new/place")
	writeFile(t, src, "x", 0o644)
	h.check(
		step{"file.rename", true, []any{"name", dst, "source", src}, states.None, `File "` + src + `" is set to be moved to "` + dst + `"`, `{}`},
		step{"file.rename", false, []any{"name", dst, "source", src}, states.False, "The target directory " + h.p("new") + " is not present", ""},
		step{"file.rename", false, []any{"name", dst, "source", src, "makedirs", true}, states.True,
			`Moved "` + src + `" to "` + dst + `"`, `{"` + dst + `":"` + src + `"}`},
		step{"file.rename", false, []any{"name", dst, "source", src}, states.True,
			`Source file "` + src + `" has already been moved out of place`, `{}`},
	)
}

func TestDirectoryOwnership(t *testing.T) {
	testhosts.RequireRoot(t, "ownership")
	h := newHarness(t)
	d := h.p("owned")
	writeFile(t, h.p("owned/f"), "x", 0o644)
	h.check(
		step{"file.directory", true, []any{"name", d, "user", "nobody", "group", "nogroup", "recurse", []any{"user", "group"}}, states.None, "",
			`{"` + h.p("owned/f") + `":{"user":"nobody","group":"nogroup"},"` + d + `":{"user":"nobody","group":"nogroup"}}`},
		step{"file.directory", false, []any{"name", d, "user", "nobody", "group", "nogroup", "recurse", []any{"user", "group"}}, states.True,
			"Directory " + d + " updated",
			`{"` + h.p("owned/f") + `":{"user":"nobody","group":"nogroup"},"` + d + `":{"user":"nobody","group":"nogroup"},"user":"nobody","group":"nogroup"}`},
		step{"file.directory", false, []any{"name", d, "user", "nobody", "group", "nogroup", "recurse", []any{"user", "group"}}, states.True,
			"The directory " + d + " is in the correct state", `{}`},
		step{"file.directory", false, []any{"name", d, "user", "no-such-user-x"}, states.False, "User no-such-user-x is not available ", ""},
	)
	st, err := os.Stat(h.p("owned/f"))
	if err != nil {
		t.Fatal(err)
	}
	if u, _ := fmodUser(h.p("owned/f")); u != "nobody" || st.Mode().Perm() != 0o644 {
		t.Errorf("owner = %v, mode %v", u, st.Mode())
	}
	link := h.p("l")
	h.check(
		step{"file.symlink", false, []any{"name", link, "target", d, "user", "nobody", "group", "nogroup"}, states.True,
			"Created new symlink " + link + " -> " + d, `{"new":"` + link + `"}`},
		step{"file.symlink", false, []any{"name", link, "target", d, "user", "nobody", "group", "nogroup"}, states.True,
			"Symlink " + link + " is present and owned by nobody:nogroup", `{}`},
		step{"file.symlink", false, []any{"name", link, "target", d}, states.True,
			"Set ownership of symlink " + link + " to root:root", `{"ownership":"root:root"}`},
	)
}

func TestHardlink(t *testing.T) {
	h := newHarness(t)
	target, link, other := h.p("t"), h.p("links/h"), h.p("o")
	writeFile(t, target, "x", 0o644)
	writeFile(t, other, "y", 0o644)
	h.check(
		step{"file.hardlink", true, []any{"name", link, "target", target}, states.None,
			"Hard link " + link + " to " + target + " is set for creation", `{"new":"` + link + `"}`},
		step{"file.hardlink", false, []any{"name", link, "target", target}, states.False,
			"Directory " + h.p("links") + " for hard link is not present", ""},
		step{"file.hardlink", false, []any{"name", link, "target", target, "makedirs", true}, states.True,
			"Created new hard link " + link + " -> " + target, `{"new":"` + link + `"}`},
		step{"file.hardlink", false, []any{"name", link, "target", target}, states.True,
			"Target of hard link " + link + " is already pointing to " + target, `{}`},
		step{"file.hardlink", true, []any{"name", link, "target", other}, states.None,
			"Link " + link + " target is set to be changed to " + other, `{"change":"` + link + `"}`},
		step{"file.hardlink", false, []any{"name", link, "target", other}, states.True,
			"Set target of hard link " + link + " -> " + other, `{"new":"` + link + `"}`},
		step{"file.hardlink", false, []any{"name", target, "target", other}, states.False,
			"File exists where the hard link " + target + " should be", ""},
		step{"file.hardlink", false, []any{"name", "rel", "target", "rel2"}, states.False,
			"Specified file rel is not an absolute path. Specified target rel2 is not an absolute path.", ""},
	)
}

func TestPruned(t *testing.T) {
	h := newHarness(t)
	d := h.p("p")
	for _, sub := range []string{"p/a/b", "p/c"} {
		if err := os.MkdirAll(h.p(sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, h.p("p/c/keep"), "x", 0o644)
	h.check(
		step{"file.pruned", true, []any{"name", d}, states.None, "Directory " + d + " is set for removal", `{"deleted":"` + d + `"}`},
		step{"file.pruned", false, []any{"name", d}, states.False, "Failed to remove directory " + d, ""},
		step{"file.pruned", false, []any{"name", d, "ignore_errors", true}, states.True,
			"Recursively removed empty directories under " + d, `{"deleted":["` + h.p("p/a") + `","` + h.p("p/a/b") + `"]}`},
		step{"file.pruned", false, []any{"name", h.p("none")}, states.True, "Directory " + h.p("none") + " is not present", `{}`},
	)
}

func TestTidied(t *testing.T) {
	h := newHarness(t)
	d := h.p("logs")
	writeFile(t, h.p("logs/old.log"), "x", 0o644)
	writeFile(t, h.p("logs/new.log"), "x", 0o644)
	writeFile(t, h.p("logs/keep.txt"), "x", 0o644)
	writeFile(t, h.p("logs/sub/big.log"), strings.Repeat("x", 2048), 0o644)
	old := time.Now().Add(-10 * 24 * time.Hour)
	if err := os.Chtimes(h.p("logs/old.log"), old, old); err != nil {
		t.Fatal(err)
	}
	h.check(
		step{"file.tidied", true, []any{"name", d, "age", 5, "size", "1KiB", "matches", []any{`.*\.log`}}, states.None,
			d + " is set for tidy", `{"removed":["` + h.p("logs/sub/big.log") + `","` + h.p("logs/old.log") + `"]}`},
		step{"file.tidied", false, []any{"name", d, "age", 5, "size", "1KiB", "matches", []any{`.*\.log`}}, states.True,
			"Removed 2 files or directories from directory " + d, ""},
		step{"file.tidied", false, []any{"name", d, "age", 5, "size", "1KiB", "matches", []any{`.*\.log`}}, states.True,
			"Nothing to remove from directory " + d, `{}`},
		step{"file.tidied", false, []any{"name", h.p("nope")}, states.False, h.p("nope") + " does not exist or is not a directory.", ""},
	)
	if !pathExists(h.p("logs/new.log")) || !pathExists(h.p("logs/keep.txt")) || !pathExists(h.p("logs/sub")) {
		t.Errorf("tidied removed too much")
	}
	for in, want := range map[string]int64{"10": 10, "1K": 1024, "1KiB": 1024, "1KB": 1000, "2M": 2 << 20, "x": 0} {
		if got := humanToBytes(in); got != want {
			t.Errorf("humanToBytes(%q) = %d, want %d", in, got, want)
		}
	}
}
