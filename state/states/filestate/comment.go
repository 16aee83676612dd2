package filestate

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/state/modules/file"
	"github.com/brinesalt/brine/state/states"
)

var commentSpec = spec(false, modulesParam("regex"), opt("char", "#"), opt("backup", ".bak"), opt("ignore_missing", false))

var uncommentSpec = spec(false, modulesParam("regex"), opt("char", "#"), opt("backup", ".bak"))

// backupArg is a backup suffix argument; False or None means none.
func backupArg(c *states.Call) string {
	switch v := c.Arg("backup").(type) {
	case nil, bool:
		return ""
	default:
		return py.Str(v)
	}
}

// commentState is file.comment.
func commentState(_ context.Context, c *states.Call) (*states.Result, error) {
	name := expandUser(c.Str("name"))
	if name == "" {
		return fail(name, "Must provide name to file.comment"), nil
	}
	if msg := checkFile(name); msg != "" {
		return fail(name, msg), nil
	}
	char, regex := c.Str("char"), c.Str("regex")
	unanchored := file.Unanchor(regex)
	commented := char + unanchored
	found, err := file.HasUncommented(name, unanchored, char)
	if err != nil {
		return nil, err
	}
	r := states.NewResult(name, states.False, "")
	if !found {
		if ok, _ := file.Search(name, commented, 8, true, false); ok {
			r.Result, r.Comment = states.True, "Pattern already commented"
		} else if c.Bool("ignore_missing") {
			r.Result, r.Comment = states.True, "Pattern not found and ignore_missing set to True"
		} else {
			r.Comment = unanchored + ": Pattern not found"
		}
		return r, nil
	}
	if c.Env.Test {
		r.Changes.Set(name, "updated")
		r.Result, r.Comment = states.None, fmt.Sprintf("File %s is set to be updated", name)
		return r, nil
	}
	before, _ := os.ReadFile(name)
	if _, err := file.CommentLine(name, regex, char, true, backupArg(c)); err != nil {
		return nil, err
	}
	after, _ := os.ReadFile(name)
	ok, _ := file.Search(name, commented, 8, true, false)
	setTextDiff(r, after, file.SplitLinesKeep(string(before)), file.SplitLinesKeep(string(after)), "")
	r.Result, r.Comment = states.TriOf(ok), "Commented lines successfully"
	if !ok {
		r.Comment = "Expected commented lines not found"
	}
	return r, nil
}

// uncommentState is file.uncomment.
func uncommentState(_ context.Context, c *states.Call) (*states.Result, error) {
	name := expandUser(c.Str("name"))
	if name == "" {
		return fail(name, "Must provide name to file.uncomment"), nil
	}
	if msg := checkFile(name); msg != "" {
		return fail(name, msg), nil
	}
	char, regex := c.Str("char"), c.Str("regex")
	bare := strings.TrimLeft(regex, "^")
	r := states.NewResult(name, states.False, "")
	if ok, _ := file.Search(name, char+"[ \t]*"+bare, 8, true, false); !ok {
		if ok, _ := file.Search(name, "^[ \t]*"+bare, 8, true, false); ok {
			r.Result, r.Comment = states.True, "Pattern already uncommented"
		} else {
			r.Comment = regex + ": Pattern not found"
		}
		return r, nil
	}
	if c.Env.Test {
		r.Changes.Set(name, "updated")
		r.Result, r.Comment = states.None, fmt.Sprintf("File %s is set to be updated", name)
		return r, nil
	}
	before, _ := os.ReadFile(name)
	if _, err := file.CommentLine(name, regex, char, false, backupArg(c)); err != nil {
		return nil, err
	}
	after, _ := os.ReadFile(name)
	ok, _ := file.Search(name, "^[ \t]*"+bare, 8, true, false)
	setTextDiff(r, after, file.ReadLines(string(before)), file.ReadLines(string(after)), "")
	r.Result, r.Comment = states.TriOf(ok), "Uncommented lines successfully"
	if !ok {
		r.Comment = "Expected uncommented lines not found"
	}
	return r, nil
}
