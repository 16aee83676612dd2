package file

import (
	"os"
	"strconv"
	"sync"
)

// idNames caches uid → user or gid → group names for one account
// database file. A highstate of many file states asks for the same few
// owners hundreds of times, and every os/user lookup re-reads and
// re-parses /etc/passwd or /etc/group; the cache is dropped whenever the
// file's inode, size or modification time changes (a user.present or
// group.present in the same run), so a name is never staler than Salt's
// own uncached getpwuid/getgrgid lookups would be.
type idNames struct {
	file string

	mu    sync.Mutex
	stamp fileStamp
	names map[int]any
}

// fileStamp identifies one version of a file.
type fileStamp struct {
	ino, size int64
	mtime     int64 // nanoseconds
	ok        bool
}

func stampOf(path string) fileStamp {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}
	}
	st := statOf(path, fi)
	return fileStamp{ino: int64(st.Ino), size: fi.Size(), mtime: fi.ModTime().UnixNano(), ok: true}
}

var (
	userNames  = &idNames{file: "/etc/passwd"}
	groupNames = &idNames{file: "/etc/group"}
)

// name returns the name for id from lookup (or the id itself when it has
// none, as file.uid_to_user does), cached while the database file is
// unchanged. Without a readable database file nothing is cached.
func (c *idNames) name(id int, lookup func(string) (string, error)) any {
	stamp := stampOf(c.file)
	c.mu.Lock()
	if !stamp.ok || stamp != c.stamp {
		c.stamp, c.names = stamp, nil
	}
	if v, ok := c.names[id]; ok {
		c.mu.Unlock()
		return v
	}
	c.mu.Unlock()
	var v any = id
	if n, err := lookup(strconv.Itoa(id)); err == nil {
		v = n
	}
	if stamp.ok {
		c.mu.Lock()
		if c.stamp == stamp {
			if c.names == nil {
				c.names = map[int]any{}
			}
			c.names[id] = v
		}
		c.mu.Unlock()
	}
	return v
}
