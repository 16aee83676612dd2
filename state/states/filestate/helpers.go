package filestate

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/modules/file"
	"github.com/brinesalt/brine/state/states"
)

// saltenv is the chunk's environment (Salt's __env__), "base" by default.
func saltenv(c *states.Call) string {
	if c.Saltenv != "" {
		return c.Saltenv
	}
	return "base"
}

// owner is _test_owner: `owner` is accepted as an alias of `user`.
func owner(c *states.Call) any {
	if u := c.Arg("user"); u != nil {
		return u
	}
	if v, ok := c.Kw("owner"); ok {
		return v
	}
	return nil
}

// checkUser is _check_user: the user and group must exist (outside test
// mode, where a missing one is only logged).
func checkUser(c *states.Call, usr, grp any) string {
	var msg string
	if modules.Truthy(usr) {
		if _, ok := file.UserToUID(usr); !ok {
			msg += fmt.Sprintf("User %s is not available ", ordered.KeyString(usr))
		}
	}
	if modules.Truthy(grp) {
		if _, ok := file.GroupToGID(grp); !ok {
			msg += fmt.Sprintf("Group %s is not available", ordered.KeyString(grp))
		}
	}
	if msg != "" && c.Env.Test {
		logWarn(c, "%s", msg)
		return ""
	}
	return msg
}

// traverse is salt.utils.data.traverse_dict_and_list with a delimiter.
func traverse(m *ordered.Map, key, delim string) (any, bool) {
	var cur any = m
	for _, part := range strings.Split(key, delim) {
		switch x := cur.(type) {
		case *ordered.Map:
			v, ok := x.Get(part)
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			var i int
			if _, err := fmt.Sscanf(part, "%d", &i); err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			cur = x[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// expandUser is os.path.expanduser for "~" and "~/…".
func expandUser(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if h, err := os.UserHomeDir(); err == nil {
			return filepath.Join(h, p[1:])
		}
	}
	return p
}

// isDir and pathExists are os.path.isdir and os.path.exists (following links).
func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

func pathExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func isLink(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.Mode()&os.ModeSymlink != 0
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}
