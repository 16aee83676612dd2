// Package proc is the part of saltutil that whatever runs jobs needs
// without the file client: the registry of running jobs (Salt's proc
// files under <cachedir>/proc) and the custom grain executables
// saltutil.sync_grains installs. The thin binary (both flavors) and the
// minion use it; the saltutil execution module builds on it. Keeping it
// apart keeps cp, the file client and TLS out of the core thin.
package proc
