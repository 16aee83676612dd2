package roster

import (
	"log/slog"
	"strings"
)

// warnUnsupported says, once for a roster, which of its hosts set a key
// Brine reads but cannot act on yet, so that it is not taken in silently.
// mine_functions (Salt's salt-ssh runs mine.get through them,
// salt/client/ssh/wrapper/mine.py) waits for Brine's mine support.
func warnUnsupported(log *slog.Logger, file string, entries []Entry) {
	var hosts []string
	for _, e := range entries {
		if e.Target.MineFunctions != nil {
			hosts = append(hosts, e.ID)
		}
	}
	if len(hosts) == 0 {
		return
	}
	const show = 5
	list := strings.Join(hosts[:min(len(hosts), show)], ", ")
	if len(hosts) > show {
		list += ", …"
	}
	log.Warn("roster key mine_functions is not supported yet; the mine of these hosts is not filled from it",
		logKeyFile, file, logKeyKey, "mine_functions", "hosts", list, "count", len(hosts))
}
