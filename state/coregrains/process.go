package coregrains

import (
	"crypto/sha256"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/version"
)

// processGrains covers the minion process, identity and environment:
// minion_process.py, extra.shell, core.py id_, get_master, get_server_id,
// cwd, path, locale_info and the salt version grains.
func (o GatherOptions) processGrains() map[string]any {
	g := map[string]any{"pid": os.Getpid()}
	processIdentity(g)
	id := o.optString("id")
	g["id"] = id
	g["server_id"] = serverID(id)
	master, ok := o.Opts.Get("master")
	if !ok {
		master = "salt"
	}
	g["master"] = master
	if wd, err := os.Getwd(); err == nil {
		g["cwd"] = wd
	}
	p := strings.TrimSpace(os.Getenv("PATH"))
	g["path"], g["systempath"] = p, toAny(strings.Split(p, string(filepath.ListSeparator)))
	g["shell"] = defaultShell()
	g["locale_info"] = localeInfo()
	g["saltversion"] = version.Salt
	g["saltversioninfo"] = []any{version.SaltInfo[0], version.SaltInfo[1]}
	return g
}

// serverID is core.py get_server_id: sha256 of the id, as an integer,
// modulo 2**31.
func serverID(id string) int {
	sum := sha256.Sum256([]byte(id))
	n := new(big.Int).SetBytes(sum[:])
	return int(n.Mod(n, big.NewInt(1<<31)).Int64())
}

// localeInfo mirrors Python's locale.getlocale() for LC_CTYPE as set by
// the environment (Python coerces the C locale to C.UTF-8).
func localeInfo() map[string]any {
	loc := ""
	for _, k := range []string{"LC_ALL", "LC_CTYPE", "LANG"} {
		if v := os.Getenv(k); v != "" {
			loc = v
			break
		}
	}
	lang, enc := "C", "UTF-8"
	if loc != "" && loc != "C" && loc != "POSIX" {
		l, e, _ := strings.Cut(loc, ".")
		e, _, _ = strings.Cut(e, "@")
		lang = l
		switch strings.ToLower(strings.ReplaceAll(e, "-", "")) {
		case "utf8", "":
			enc = "UTF-8"
		default:
			enc = e
		}
	}
	tz, _ := time.Now().Zone()
	return map[string]any{
		"defaultlanguage":  lang,
		"defaultencoding":  enc,
		"detectedencoding": "utf-8",
		"timezone":         tz,
	}
}
