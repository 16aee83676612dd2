package file

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/state/modules"
)

// backup is one minion backup of a file.
type backup struct {
	when     time.Time
	location string
	size     int64
}

// parseBackupStamp reads backup_minion's "<base>_Mon_Jan_02_15:04:05_<micro>_2006".
func parseBackupStamp(fname, base string) (time.Time, bool) {
	rest, ok := strings.CutPrefix(fname, base+"_")
	if !ok {
		return time.Time{}, false
	}
	parts := strings.Split(rest, "_")
	if len(parts) != 6 {
		return time.Time{}, false
	}
	t, err := time.ParseInLocation("Mon_Jan_02_15:04:05_2006", strings.Join(append(parts[:4:4], parts[5]), "_"), time.Local)
	if err != nil {
		return time.Time{}, false
	}
	micros, err := strconv.Atoi(parts[4])
	if err != nil || len(parts[4]) != 6 {
		return time.Time{}, false
	}
	return t.Add(time.Duration(micros) * time.Microsecond), true
}

// Backups lists path's minion backups, newest first (list_backups).
func Backups(path string, opts *ordered.Map) []backup {
	path = expandUser(path)
	dir, base := filepath.Split(path)
	bkdir := filepath.Join(BackupRoot(opts), strings.TrimPrefix(dir, "/"))
	ents, err := os.ReadDir(bkdir)
	if err != nil {
		return nil
	}
	var out []backup
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		when, ok := parseBackupStamp(e.Name(), base)
		if !ok {
			continue
		}
		loc := filepath.Join(bkdir, e.Name())
		st, err := os.Stat(loc)
		if err != nil {
			continue
		}
		out = append(out, backup{when: when, location: loc, size: st.Size()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].when.After(out[j].when) })
	return out
}

func listBackups(_ context.Context, c *modules.Call) (any, error) {
	all := Backups(c.Str("path"), c.Env.Opts)
	if n, ok := c.Arg("limit").(int); ok && n < len(all) && n >= 0 {
		all = all[:n]
	}
	out := ordered.New()
	for i, b := range all {
		out.Set(i, ordered.FromPairs("Backup Time", b.when.Format("Mon Jan 02 2006 15:04:05.000000"),
			"Size", int(b.size), "Location", b.location))
	}
	return out, nil
}

// pickBackup resolves backup_id as restore_backup and delete_backup do.
func pickBackup(c *modules.Call) (*backup, *ordered.Map) {
	id := py.Str(c.Arg("backup_id"))
	ret := ordered.FromPairs("result", false, "comment", fmt.Sprintf("Invalid backup_id '%s'", id))
	n, err := strconv.Atoi(id)
	if err != nil || strconv.Itoa(n) != id {
		return nil, ret
	}
	all := Backups(c.Str("path"), c.Env.Opts)
	if n < 0 || n >= len(all) {
		ret.Set("comment", fmt.Sprintf("backup_id '%s' does not exist for %s", id, expandUser(c.Str("path"))))
		return nil, ret
	}
	return &all[n], ret
}

func restoreBackup(_ context.Context, c *modules.Call) (any, error) {
	b, ret := pickBackup(c)
	if b == nil {
		return ret, nil
	}
	path := expandUser(c.Str("path"))
	if _, err := os.Stat(path); err == nil {
		if err := backupMinion(path, BackupRoot(c.Env.Opts)); err != nil {
			return nil, modules.Errorf("back up %s: %w", path, err)
		}
	}
	data, err := os.ReadFile(b.location)
	if err == nil {
		err = writeOrCreate(path, data)
	}
	if err != nil {
		ret.Set("comment", fmt.Sprintf("Unable to restore %s to %s: %s", b.location, path, err.Error()))
		return ret, nil
	}
	ret.Set("result", true)
	ret.Set("comment", fmt.Sprintf("Successfully restored %s to %s", b.location, path))
	return ret, nil
}

func deleteBackup(_ context.Context, c *modules.Call) (any, error) {
	b, ret := pickBackup(c)
	if b == nil {
		return ret, nil
	}
	if err := os.Remove(b.location); err != nil {
		ret.Set("comment", fmt.Sprintf("Unable to remove %s: %s", b.location, pyOSError(err)))
		return ret, nil
	}
	ret.Set("result", true)
	ret.Set("comment", fmt.Sprintf("Successfully removed %s", b.location))
	return ret, nil
}

func registerBackups(reg func(name, doc string, s modules.Spec, fn modules.Func)) {
	reg("list_backups", "List the minion backups of a file, newest first.", sig(req("path"), opt("limit", nil)), listBackups)
	reg("restore_backup", "Restore a minion backup by its list_backups id.", sig(req("path"), req("backup_id")), restoreBackup)
	reg("delete_backup", "Delete a minion backup by its list_backups id.", sig(req("path"), req("backup_id")), deleteBackup)
	reg("remove_backup", "Alias of delete_backup.", sig(req("path"), req("backup_id")), deleteBackup)
}
