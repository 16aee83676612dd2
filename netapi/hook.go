package netapi

import (
	"net/http"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/master"
)

// hookEndpoint is Webhook: POST fires salt/netapi/hook/<path>; it needs a
// session unless webhook_disable_auth.
func (s *Server) hookEndpoint() *endpoint {
	return &endpoint{maxArgs: -1, methods: map[string]*method{
		http.MethodPost: {h: s.hook, sessions: true, auth: !s.cfg.WebhookDisableAuth},
	}}
}

// hookHeadersHidden are request headers the event does not carry: the
// event bus is readable by every API user (/events), and these carry
// the caller's session or credentials. Salt puts them in the event.
var hookHeadersHidden = map[string]bool{"X-Auth-Token": true, "Cookie": true, "Authorization": true}

// hook is Webhook.POST: the event's data is the raw body, the parsed
// body and the request headers (CherryPy's, with Host and Remote-Addr).
func (s *Server) hook(c *call) (any, error) {
	tag := strings.Join(append([]string{"salt", "netapi", "hook"}, c.args...), "/")
	post := c.body.Data
	if !truthy(post) {
		post = ordered.New()
	}
	headers := ordered.FromPairs("Remote-Addr", remoteIP(c.r), "Host", c.r.Host)
	for k, v := range c.r.Header {
		if !hookHeadersHidden[k] {
			headers.Set(k, strings.Join(v, ", "))
		}
	}
	data := ordered.FromPairs("body", c.body.Raw, "post", post, "headers", headers)
	err := s.pool.with(c.ctx, func(cl *master.Client) error { return cl.FireEvent(c.ctx, tag, data) })
	if err != nil {
		return nil, err
	}
	return ordered.FromPairs("success", true), nil
}
