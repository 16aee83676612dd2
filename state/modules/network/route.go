package network

import (
	"context"
	"regexp"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
)

func init() {
	reg("get_route", "Return {destination, gateway, interface, source} of the route to ip (ip route get).", getRoute, req("ip"))
}

var routeGet = regexp.MustCompile(`(via\s+(?P<gateway>[\w\.:]+))?\s+dev\s+(?P<interface>[\w\.\:\-]+)\s+.*src\s+(?P<source>[\w\.:]+)`)

func getRoute(ctx context.Context, c *modules.Call) (any, error) {
	ip := c.Str("ip")
	if _, err := parseIP(ip); err != nil {
		return nil, err
	}
	out, rc, err := runText(ctx, "ip", "route", "get", ip)
	if err != nil {
		return nil, err
	}
	if rc != 0 {
		return nil, modules.Errorf("ip route get %s: %s", ip, out)
	}
	return parseRouteGet(ip, out)
}

// parseRouteGet reads the first line of `ip route get` as Salt's
// regular expression does; gateway is None for a directly connected
// destination.
func parseRouteGet(ip, out string) (*ordered.Map, error) {
	first, _, _ := strings.Cut(out, "\n")
	m := routeGet.FindStringSubmatch(first)
	if m == nil {
		return nil, modules.Errorf("parse ip route get output: %q", first)
	}
	var gw any
	if g := m[routeGet.SubexpIndex("gateway")]; g != "" {
		gw = g
	}
	return ordered.FromPairs("destination", ip, "gateway", gw,
		"interface", m[routeGet.SubexpIndex("interface")], "source", m[routeGet.SubexpIndex("source")]), nil
}
