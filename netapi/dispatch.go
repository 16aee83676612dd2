package netapi

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// Handler is the API with the tools every request passes through:
// the access log and /stats counters, root_prefix, CORS (cors_tool, with
// a working preflight), authorized_ips (salt_ip_verify_tool) and, for
// browsers, the app (html_override_tool).
func (s *Server) Handler() http.Handler {
	eps := s.endpoints()
	var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.route(w, r, eps) })
	h = s.ipVerify(h)
	h = cors(h)
	if p := strings.TrimRight(s.cfg.RootPrefix, "/"); p != "" {
		h = http.StripPrefix(p, h)
	}
	return s.logged(h)
}

// logged records each request in the access log and the stats.
func (s *Server) logged(next http.Handler) http.Handler {
	var al *accessLogger
	if s.access != nil {
		al = &accessLogger{w: s.access}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		done := s.stats.begin()
		rec := &recorder{ResponseWriter: w}
		body := &countingBody{ReadCloser: r.Body}
		r.Body = body
		next.ServeHTTP(rec, r)
		if rec.status == 0 {
			rec.status = http.StatusOK
		}
		done(body.n, rec.written)
		if al != nil {
			al.log(r, rec.status, rec.written, time.Now())
		}
	})
}

// cors is rest_cherrypy's cors_tool: every response allows the
// request's Origin (or any) with credentials; a preflight OPTIONS is
// answered here with the allowed methods and headers. (Salt's own
// preflight fails with a 500 after setting these headers.)
func cors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		origin := r.Header.Get("Origin")
		if origin == "" {
			origin = "*"
		}
		h.Set("Access-Control-Allow-Origin", origin)
		h.Set("Access-Control-Expose-Headers", "GET, POST")
		h.Set("Access-Control-Allow-Credentials", "true")
		h.Add("Vary", "Origin")
		if r.Method != http.MethodOptions {
			next.ServeHTTP(w, r)
			return
		}
		if m := r.Header.Get("Access-Control-Request-Method"); m == http.MethodGet || m == http.MethodPost {
			h.Set("Access-Control-Allow-Methods", "GET, POST")
			h.Set("Access-Control-Allow-Headers", "Content-Type, X-Auth-Token, X-Requested-With")
			h.Set("Access-Control-Max-Age", "1400")
		}
		h.Set("Content-Length", "0")
		w.WriteHeader(http.StatusOK)
	})
}

// ipVerify is salt_ip_verify_tool: with rest_cherrypy's authorized_ips
// set, other clients get 403 "Bad IP".
func (s *Server) ipVerify(next http.Handler) http.Handler {
	if len(s.cfg.AuthorizedIPs) == 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ip := remoteIP(r); !slices.Contains(s.cfg.AuthorizedIPs, ip) {
			s.log.Error("Blocked IP: " + ip)
			s.writeError(&call{s: s, w: w, r: r}, httpError(403, "Bad IP"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// route finds what serves a path: the app for browsers, static files,
// the app path, the favicon, the webhook, then the endpoints by their
// first path segment (CherryPy's MethodDispatcher; a trailing slash is
// the same URL).
func (s *Server) route(w http.ResponseWriter, r *http.Request, eps map[string]*endpoint) {
	p := r.URL.Path
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	switch {
	case s.htmlOverride(r, p):
		s.serveApp(w, r)
		return
	case s.cfg.Static != "" && underPath(p, s.cfg.StaticPath):
		s.serveStatic(w, r, strings.TrimPrefix(p, strings.TrimRight(s.cfg.StaticPath, "/")))
		return
	case underPath(p, s.cfg.AppPath):
		s.serveApp(w, r)
		return
	case s.cfg.Favicon != "" && p == "/favicon.ico":
		s.serveFile(w, r, s.cfg.Favicon)
		return
	case underPath(p, s.cfg.WebhookURL):
		s.serveEndpoint(w, r, s.hookEndpoint(), splitPath(strings.TrimPrefix(p, strings.TrimRight(s.cfg.WebhookURL, "/"))))
		return
	}
	segs := splitPath(p)
	name, args := "", []string(nil)
	if len(segs) > 0 {
		name, args = segs[0], segs[1:]
	}
	ep, ok := eps[name]
	if !ok || (ep.maxArgs >= 0 && len(args) > ep.maxArgs) {
		s.writeError(&call{s: s, w: w, r: r}, httpError(404, fmt.Sprintf("The path '%s' was not found.", p)))
		return
	}
	s.serveEndpoint(w, r, ep, args)
}

// underPath reports whether p is prefix or below it.
func underPath(p, prefix string) bool {
	prefix = "/" + strings.Trim(prefix, "/")
	return prefix != "/" && (p == prefix || strings.HasPrefix(p, prefix+"/"))
}

// splitPath splits a path into its segments, dropping empty ones (a
// trailing slash).
func splitPath(p string) []string {
	var out []string
	for _, s := range strings.Split(p, "/") {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}
