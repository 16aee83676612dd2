package master

import (
	"context"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"

	"github.com/brinesalt/brine/internal/config"
	"github.com/brinesalt/brine/internal/ordered"
)

func init() {
	registerWheel("config.values", func(m *Master, _ context.Context, _ wheelArgs) (any, error) {
		return m.configValues(), nil
	})
	registerWheel("minions.connected", func(m *Master, _ context.Context, _ wheelArgs) (any, error) {
		return strList(m.connectedIDs()), nil
	})
}

// configValues is config.values (salt/wheel/config.py): the master's
// options. Salt answers its whole opts; Brine answers the default of
// every option its table knows, overlaid by the values the config files
// set (options it does not know included, as read).
func (m *Master) configValues() *ordered.Map {
	out := ordered.New()
	for _, o := range config.MasterOptions() {
		d := o.Default
		if f, ok := d.(func() any); ok {
			d = f()
		}
		if d != nil {
			out.Set(o.Key, d)
		}
	}
	m.o.Raw.Range(func(k, v any) bool { out.Set(k, ordered.DeepCopy(v)); return true })
	return out
}

// connectedIDs is CkMinions.connected_ids: the minions in the data cache
// whose ipv4 or ipv6 grains hold the address of a connection to the
// publish port (a loopback connection stands for every address of this
// host). Without minion_data_cache nobody is listed, as in Salt.
func (m *Master) connectedIDs() []string {
	if v, ok := m.o.Raw.Get("minion_data_cache"); ok && v != true {
		return []string{}
	}
	addrs := m.publishPeers()
	out := []string{}
	for _, id := range m.cachedMinions() {
		d, ok := m.minionData(id)
		if !ok {
			continue
		}
		if hasAddr(d.Grains, "ipv4", addrs) || hasAddr(d.Grains, "ipv6", addrs) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// publishPeers are the addresses connected to the publish socket.
func (m *Master) publishPeers() map[netip.Addr]bool {
	addrs := map[netip.Addr]bool{}
	if m.pubSock == nil {
		return addrs
	}
	loop := false
	for _, a := range m.pubSock.RemoteAddrs() {
		ap, err := netip.ParseAddrPort(a.String())
		if err != nil {
			continue
		}
		ip := ap.Addr().Unmap()
		if ip.IsLoopback() {
			loop = true
			continue
		}
		addrs[ip] = true
	}
	if loop {
		ifs, _ := net.InterfaceAddrs()
		for _, ia := range ifs {
			if n, ok := ia.(*net.IPNet); ok {
				if ip, ok := netip.AddrFromSlice(n.IP); ok && !ip.Unmap().IsLoopback() {
					addrs[ip.Unmap()] = true
				}
			}
		}
	}
	return addrs
}

func hasAddr(grains *ordered.Map, key string, addrs map[netip.Addr]bool) bool {
	l, _ := grains.Value(key).([]any)
	for _, x := range l {
		s, _ := x.(string)
		if ip, err := netip.ParseAddr(s); err == nil && addrs[ip.Unmap()] {
			return true
		}
	}
	return false
}

// cachedMinions lists the minions with a data cache entry.
func (m *Master) cachedMinions() []string {
	ents, err := os.ReadDir(filepath.Join(m.o.CacheDir, "minions"))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			if _, err := os.Stat(m.dataPath(e.Name())); err == nil {
				out = append(out, e.Name())
			}
		}
	}
	return out
}
