package filestate

import (
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/states"
)

func map1(k string, v any) *ordered.Map { return ordered.FromPairs(k, v) }

func TestAppendPrepend(t *testing.T) {
	h := newHarness(t)
	f := h.p("a.txt")
	writeFile(t, f, "one\ntwo\n", 0o644)
	h.check(
		step{"file.append", true, []any{"name", f, "text", []any{"two", "three"}}, states.None,
			"File " + f + " is set to be updated", `{"diff":"--- \n\n+++ \n\n@@ -1,2 +1,3 @@\n\n one\n two\n+three"}`},
		// notes item 36: only the missing line, blank lines after the headers.
		step{"file.append", false, []any{"name", f, "text", []any{"two", "three"}}, states.True,
			"Appended 1 lines", `{"diff":"--- \n\n+++ \n\n@@ -1,2 +1,3 @@\n\n one\n two\n+three"}`},
		step{"file.append", false, []any{"name", f, "text", "three"}, states.True, "File " + f + " is in correct state", `{}`},
		// \s in the whitespace-split pattern spans the newline between
		// "one" and "two", as in Salt.
		step{"file.append", false, []any{"name", f, "text", "  one   two  "}, states.True, "File " + f + " is in correct state", `{}`},
		step{"file.append", false, []any{"name", f, "text", "one two", "ignore_whitespace", false}, states.True,
			"Appended 1 lines", `{"diff":"--- \n\n+++ \n\n@@ -1,3 +1,4 @@\n\n one\n two\n three\n+one two"}`},
		step{"file.append", false, []any{"name", h.p("new/n.txt"), "text", "x", "makedirs", true}, states.True, "Appended 1 lines", ""},
		step{"file.prepend", false, []any{"name", f, "text", "zero"}, states.True, "Prepended 1 lines",
			`{"diff":"--- \n+++ \n@@ -1,3 +1,4 @@\n+zero\n one\n two\n three\n"}`},
		step{"file.prepend", false, []any{"name", f, "text", "zero"}, states.True, "File " + f + " is in correct state", `{}`},
	)
	if got := readFile(t, f); got != "zero\none\ntwo\nthree\none two\n" {
		t.Errorf("content = %q", got)
	}
	h.salt("snippets/s.txt", "from {{ grains['os_family'] }}\n")
	h.check(step{"file.append", false, []any{"name", f, "source", "salt://snippets/s.txt"}, states.True, "Appended 1 lines", ""})
	if got := readFile(t, f); got != "zero\none\ntwo\nthree\none two\nfrom Debian\n" {
		t.Errorf("content after source = %q", got)
	}
}

func TestReplaceState(t *testing.T) {
	h := newHarness(t)
	f := h.p("app.cfg")
	writeFile(t, f, "port=80\nhost=localhost\n", 0o640)
	diff := `{"diff":"--- \n+++ \n@@ -1,2 +1,2 @@\n-port=80\n+port=8080\n host=localhost\n"}`
	h.check(
		step{"file.replace", true, []any{"name", f, "pattern", `^port=\d+$`, "repl", "port=8080"}, states.None, "Changes would have been made", diff},
		step{"file.replace", false, []any{"name", f, "pattern", `^port=\d+$`, "repl", "port=8080"}, states.True, "Changes were made", diff},
		step{"file.replace", false, []any{"name", f, "pattern", `^port=\d+$`, "repl", "port=8080"}, states.True, "No changes needed to be made", `{}`},
		step{"file.replace", false, []any{"name", f, "pattern", `^nothing=.*$`, "repl", "x"}, states.True, "No changes needed to be made", `{}`},
		step{"file.replace", false, []any{"name", f, "pattern", `^debug=.*$`, "repl", "debug=1", "append_if_not_found", true}, states.True,
			"Changes were made", `{"diff":"--- \n+++ \n@@ -1,2 +1,3 @@\n port=8080\n host=localhost\n+debug=1\n"}`},
		step{"file.replace", false, []any{"name", h.p("nope"), "pattern", "a", "repl", "b"}, states.False, h.p("nope") + ": file not found", ""},
		step{"file.replace", false, []any{"name", h.p("nope"), "pattern", "a", "repl", "b", "ignore_if_missing", true}, states.True, "No changes needed to be made", ""},
	)
	if got := readFile(t, f+".bak"); got != "port=8080\nhost=localhost\n" {
		t.Errorf("backup = %q", got)
	}
	if m := modeOf(t, f); m != "0640" {
		t.Errorf("mode = %s, want 0640 kept", m)
	}
}

func TestLineState(t *testing.T) {
	h := newHarness(t)
	f := h.p("l.conf")
	writeFile(t, f, "[main]\nkey=1\n", 0o644)
	h.check(
		step{"file.line", true, []any{"name", f, "content", "new=2", "mode", "ensure", "after", `^\[main\]$`}, states.None, "Changes would be made",
			`{"diff":"--- \n+++ \n@@ -1,2 +1,3 @@\n [main]\n+new=2\n key=1\n"}`},
		step{"file.line", false, []any{"name", f, "content", "new=2", "mode", "ensure", "after", `^\[main\]$`}, states.True, "Changes were made", ""},
		step{"file.line", false, []any{"name", f, "content", "new=2", "mode", "ensure", "after", `^\[main\]$`}, states.True, "No changes needed to be made", `{}`},
		step{"file.line", false, []any{"name", f, "content", "key=3", "match", "^key=", "mode", "replace"}, states.True, "Changes were made", ""},
		step{"file.line", false, []any{"name", f, "match", "new=", "mode", "delete"}, states.True, "Changes were made", ""},
		step{"file.line", false, []any{"name", f, "content", "x"}, states.False, "Mode was not defined. How to process the file?", ""},
		step{"file.line", false, []any{"name", h.p("absent.conf"), "content", "x", "mode", "insert", "location", "start"}, states.False,
			h.p("absent.conf") + ": file not found", ""},
		step{"file.line", false, []any{"name", h.p("created.conf"), "content", "x", "mode", "insert", "location", "start", "create", true}, states.True,
			"Changes were made", ""},
	)
	if got := readFile(t, f); got != "[main]\nkey=3\n" {
		t.Errorf("content = %q", got)
	}
	if got := readFile(t, h.p("created.conf")); got != "x\n" {
		t.Errorf("created = %q", got)
	}
}

func TestRecurse(t *testing.T) {
	h := newHarness(t)
	h.salt("web/index.html", "<h1>{{ grains['id'] }}</h1>\n")
	h.salt("web/css/site.css", "body{}\n")
	d := h.p("www")
	h.check(
		step{"file.recurse", false, []any{"name", d, "source", "salt://web", "template", "jinja", "file_mode", 640}, states.True,
			"Recursively updated " + d, ""},
		step{"file.recurse", false, []any{"name", d, "source", "salt://web", "template", "jinja", "file_mode", 640}, states.True,
			"The directory " + d + " is in the correct state", `{}`},
		step{"file.recurse", false, []any{"name", d, "source", "salt://nope"}, states.False,
			"The directory 'nope' does not exist on the salt fileserver in saltenv 'base'", ""},
		step{"file.recurse", false, []any{"name", d, "source", "/srv/x"}, states.False, "Invalid source '/srv/x' (must be a salt:// URI)", ""},
	)
	if got := readFile(t, h.p("www/index.html")); got != "<h1>minion1</h1>\n" {
		t.Errorf("index = %q", got)
	}
	if m := modeOf(t, h.p("www/css/site.css")); m != "0640" {
		t.Errorf("mode = %s", m)
	}
	writeFile(t, h.p("www/stale"), "x", 0o644)
	h.check(step{"file.recurse", false, []any{"name", d, "source", "salt://web", "template", "jinja", "file_mode", 640, "clean", true}, states.True,
		"Recursively updated " + d, `{"removed":["` + h.p("www/stale") + `"]}`})
}

func TestBlockreplace(t *testing.T) {
	h := newHarness(t)
	f, g := h.p("b.conf"), h.p("g.conf")
	writeFile(t, f, "a\n#-- start managed zone --\nold\n#-- end managed zone --\nb\n", 0o644)
	writeFile(t, g, "a", 0o644)
	diff := `{"diff":"--- \n+++ \n@@ -1,5 +1,5 @@\n a\n #-- start managed zone --\n-old\n+new\n #-- end managed zone --\n b\n"}`
	h.check(
		step{"file.blockreplace", true, []any{"name", f, "content", "new"}, states.None, "Changes would be made", diff},
		step{"file.blockreplace", false, []any{"name", f, "content", "new"}, states.True, "Changes were made", diff},
		step{"file.blockreplace", false, []any{"name", f, "content", "new\n"}, states.True, "No changes needed to be made", `{}`},
		step{"file.blockreplace", false, []any{"name", g, "content", "x"}, states.False,
			"Encountered error managing block: Cannot edit marked block. Markers were not found in file.. See the log for details.", `{}`},
		step{"file.blockreplace", false, []any{"name", g, "content", "x", "append_if_not_found", true}, states.True, "Changes were made", ""},
		step{"file.blockreplace", false, []any{"name", g, "content", "y", "marker_start", "# BEGIN", "marker_end", "# END",
			"insert_before_match", "^a$"}, states.True, "Changes were made", ""},
	)
	if got := readFile(t, g); got != "# BEGIN\ny\n# END\na\n#-- start managed zone --\nx\n#-- end managed zone --\n" {
		t.Errorf("content = %q", got)
	}
	if got := readFile(t, f+".bak"); got != "a\n#-- start managed zone --\nold\n#-- end managed zone --\nb\n" {
		t.Errorf("backup = %q", got)
	}
}

func TestCommentUncomment(t *testing.T) {
	h := newHarness(t)
	f := h.p("c.conf")
	writeFile(t, f, "a=1\nbind 0.0.0.0\n", 0o644)
	h.check(
		step{"file.comment", true, []any{"name", f, "regex", "^bind"}, states.None, "File " + f + " is set to be updated", `{"` + f + `":"updated"}`},
		step{"file.comment", false, []any{"name", f, "regex", "^bind"}, states.True, "Commented lines successfully",
			`{"diff":"--- \n+++ \n@@ -1,2 +1,2 @@\n a=1\n-bind 0.0.0.0\n+#bind 0.0.0.0\n"}`},
		step{"file.comment", false, []any{"name", f, "regex", "^bind"}, states.True, "Pattern already commented", `{}`},
		step{"file.comment", false, []any{"name", f, "regex", "^nothing"}, states.False, "nothing: Pattern not found", `{}`},
		step{"file.uncomment", false, []any{"name", f, "regex", "bind"}, states.True, "Uncommented lines successfully",
			`{"diff":"--- \n+++ \n@@ -1,2 +1,2 @@\n a=1\n-#bind 0.0.0.0\n+bind 0.0.0.0\n"}`},
		step{"file.uncomment", false, []any{"name", f, "regex", "bind"}, states.True, "Pattern already uncommented", `{}`},
	)
	if got := readFile(t, f+".bak"); got != "a=1\n#bind 0.0.0.0\n" {
		t.Errorf("backup = %q", got)
	}
}

// The expectations were produced by running Salt 3006's keyvalue.
func TestKeyvalue(t *testing.T) {
	h := newHarness(t)
	f := h.p("kv")
	writeFile(t, f, "a=1\n#b = 2\nc=3\n", 0o644)
	h.check(step{"file.keyvalue", false, []any{"name", f, "key_values", ordered.FromPairs("a", 2, "b", "x", "d", true),
		"uncomment", "#", "append_if_not_found", true}, states.True, "Changed 3 lines",
		`{"diff":"- a=1\n+ a=2 (from int type)\n- \u003cEOF\u003e\n+ b=x\n+ d=True\n+ \u003cEOF\u003e\n"}`})
	if got := readFile(t, f); got != "a=2\n#b = 2\nc=3\nb=x\nd=True\n" {
		t.Errorf("content = %q", got)
	}
	writeFile(t, f, "a=1\nc=3\n", 0o644)
	h.check(
		step{"file.keyvalue", false, []any{"name", f, "key", "c", "value", "3"}, states.True, "", `{}`},
		step{"file.keyvalue", true, []any{"name", f, "key_values", ordered.FromPairs("x", 1, "y", 2), "prepend_if_not_found", true}, states.None,
			"File " + f + " is set to be changed (2 lines)\nPredicted diff:\n\r\t\t  <SOF>\n\r\t\t+ y=2\n\r\t\t+ x=1\n",
			`{"diff":"  \u003cSOF\u003e\n+ y=2\n+ x=1\n"}`},
		step{"file.keyvalue", false, []any{"name", f}, states.False, "file.keyvalue key and value not supplied and key_values is empty", ""},
		step{"file.keyvalue", false, []any{"name", h.p("nope"), "key", "a", "value", 1}, states.False, "unable to open " + h.p("nope"), ""},
	)
}

func TestSerialize(t *testing.T) {
	h := newHarness(t)
	y, j := h.p("d.yaml"), h.p("d.json")
	data := ordered.FromPairs("b", 1, "a", []any{"x", "y"}, "c", ordered.FromPairs("d", true))
	h.check(
		step{"file.serialize", true, []any{"name", y, "dataset", data}, states.None, "Dataset will be serialized and stored into " + y, `{"newfile":"` + y + `"}`},
		step{"file.serialize", false, []any{"name", y, "dataset", data}, states.True, "File " + y + " updated", `{"diff":"New file"}`},
		step{"file.serialize", false, []any{"name", y, "dataset", data}, states.True, "File " + y + " is in the correct state", `{}`},
		step{"file.serialize", false, []any{"name", j, "dataset", data, "serializer", "json"}, states.True, "", ""},
		step{"file.serialize", false, []any{"name", j, "dataset", ordered.FromPairs("c", ordered.FromPairs("e", 2)), "serializer", "json",
			"merge_if_exists", true}, states.True, "File " + j + " updated", `{"diff":{"c":{"e":{"new":2,"old":"\u003c_null_\u003e"}}}}`},
		step{"file.serialize", false, []any{"name", j, "dataset", ordered.FromPairs("b", 1), "serializer", "json",
			"merge_if_exists", true}, states.True, "The file " + j + " is in the correct state", `{}`},
		step{"file.serialize", false, []any{"name", j}, states.False, "Neither 'dataset' nor 'dataset_pillar' was defined", ""},
	)
	if got := readFile(t, y); got != "a:\n- x\n- y\nb: 1\nc:\n  d: true\n" {
		t.Errorf("yaml = %q", got)
	}
	if got := readFile(t, j); got != "{\n  \"a\": [\n    \"x\",\n    \"y\"\n  ],\n  \"b\": 1,\n  \"c\": {\n    \"d\": true,\n    \"e\": 2\n  }\n}\n" {
		t.Errorf("json = %q", got)
	}
}

func TestAccumulated(t *testing.T) {
	h := newHarness(t)
	f, tpl := h.p("block"), h.p("managed")
	writeFile(t, f, "top\n", 0o644)
	h.salt("acc.tpl", "{% for line in accumulator['lines'] %}{{ line }}\n{% endfor %}")
	h.check(
		step{"file.accumulated", false, []any{"name", "acc1", "filename", f, "text", []any{"one", "two"}}, states.False,
			"Orphaned accumulator acc1 in None:acc1", ""},
		step{"file.accumulated", false, []any{"name", "acc1", "filename", f, "text", []any{"one", "two"},
			"require_in", []any{map1("file", "target")}}, states.True, "Accumulator acc1 for file " + f + " was charged by text", `{}`},
		step{"file.blockreplace", false, []any{"name", f, "__id__", "target", "append_if_not_found", true}, states.True, "Changes were made", ""},
		step{"file.accumulated", false, []any{"name", "lines", "filename", tpl, "text", "x",
			"require_in", []any{map1("file", tpl)}}, states.True, "", `{}`},
		step{"file.managed", false, []any{"name", tpl, "source", "salt://acc.tpl", "template", "jinja"}, states.True, "", ""},
	)
	if got := readFile(t, f); got != "top\n#-- start managed zone --\none\ntwo\n#-- end managed zone --\n" {
		t.Errorf("block = %q", got)
	}
	if got := readFile(t, tpl); got != "x\n" {
		t.Errorf("managed = %q", got)
	}
}

func TestDecode(t *testing.T) {
	h := newHarness(t)
	f := h.p("blob")
	md5 := "5d41402abc4b2a76b9719d911017c592" // md5("hello")
	h.check(
		step{"file.decode", true, []any{"name", f, "encoded_data", "aGVs\nbG8="}, states.None, "File is set to be updated.", `{}`},
		step{"file.decode", false, []any{"name", f, "encoded_data", "aGVs\nbG8="}, states.True, "File was updated.", `{"old":null,"new":"` + md5 + `"}`},
		step{"file.decode", false, []any{"name", f, "encoded_data", "aGVsbG8="}, states.True, "File is in the correct state.", `{}`},
	)
	if got := readFile(t, f); got != "hello" {
		t.Errorf("content = %q", got)
	}
}
