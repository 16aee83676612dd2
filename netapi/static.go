package netapi

import (
	"errors"
	"io/fs"
	"mime"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// webTypes are the media types of what web front-ends are made of, set
// here rather than taken from the host's mime.types, which may call
// JavaScript application/x-javascript: module scripts run only when
// served as JavaScript, stylesheets only as text/css.
var webTypes = map[string]string{
	".html": "text/html; charset=utf-8", ".htm": "text/html; charset=utf-8",
	".js": "text/javascript; charset=utf-8", ".mjs": "text/javascript; charset=utf-8",
	".css": "text/css; charset=utf-8", ".json": "application/json", ".map": "application/json",
	".svg": "image/svg+xml", ".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg",
	".gif": "image/gif", ".webp": "image/webp", ".ico": "image/vnd.microsoft.icon",
	".woff": "font/woff", ".woff2": "font/woff2", ".ttf": "font/ttf", ".otf": "font/otf",
	".wasm": "application/wasm", ".txt": "text/plain; charset=utf-8", ".xml": "text/xml; charset=utf-8",
	".webmanifest": "application/manifest+json",
}

// contentType is the media type of a file by its extension.
func contentType(name string) string {
	ext := strings.ToLower(filepath.Ext(name))
	if t, ok := webTypes[ext]; ok {
		return t
	}
	if t := mime.TypeByExtension(ext); t != "" {
		return t
	}
	return "application/octet-stream"
}

// htmlOverride is html_override_tool: with an app configured, a GET of
// any path outside the app and static paths from a client that prefers
// HTML (not one that sends exactly "*/*"; one that sends no Accept at all
// does, as in Salt) is answered with the app.
func (s *Server) htmlOverride(r *http.Request, p string) bool {
	if !s.cfg.HasApp || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
		return false
	}
	// A websocket handshake sends no Accept, which CherryPy reads as
	// accepting HTML; it is never a page load.
	if strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		return false
	}
	if underPath(p, s.cfg.AppPath) || underPath(p, s.cfg.StaticPath) {
		return false
	}
	h := r.Header.Get("Accept")
	if h == "*/*" {
		return false
	}
	m, err := accept(h, len(r.Header.Values("Accept")) > 0, []string{"text/html"})
	return err == nil && m == "text/html"
}

// serveApp is App.GET: the app file, whatever follows app_path (for
// front-ends using the HTML5 history API).
func (s *Server) serveApp(w http.ResponseWriter, r *http.Request) {
	if !s.cfg.HasApp {
		s.writeError(&call{s: s, w: w, r: r}, httpError(404, "No app is configured (rest_cherrypy: app)."))
		return
	}
	s.serveFile(w, r, s.cfg.App)
}

// serveStatic serves a file of the static directory; directories and
// anything outside it (.., symbolic links leaving it) are not found.
func (s *Server) serveStatic(w http.ResponseWriter, r *http.Request, rel string) {
	if !getOrHead(w, r, s) {
		return
	}
	root, err := os.OpenRoot(s.cfg.Static)
	if err != nil {
		s.writeError(&call{s: s, w: w, r: r}, err)
		return
	}
	defer root.Close()
	name := strings.TrimPrefix(path.Clean("/"+rel), "/")
	if name == "" {
		name = "."
	}
	f, err := root.Open(name)
	if err != nil {
		s.notFound(w, r, err)
		return
	}
	defer f.Close()
	s.serveOpen(w, r, f, name)
}

// serveFile serves one configured file (app, favicon).
func (s *Server) serveFile(w http.ResponseWriter, r *http.Request, p string) {
	if !getOrHead(w, r, s) {
		return
	}
	f, err := os.Open(p)
	if err != nil {
		s.notFound(w, r, err)
		return
	}
	defer f.Close()
	s.serveOpen(w, r, f, p)
}

// serveOpen serves an opened regular file with its media type (a
// directory is not found).
func (s *Server) serveOpen(w http.ResponseWriter, r *http.Request, f *os.File, name string) {
	st, err := f.Stat()
	if err != nil || st.IsDir() {
		s.notFound(w, r, fs.ErrNotExist)
		return
	}
	w.Header().Set("Content-Type", contentType(name))
	http.ServeContent(w, r, filepath.Base(name), st.ModTime(), f)
}

func (s *Server) notFound(w http.ResponseWriter, r *http.Request, err error) {
	if !errors.Is(err, fs.ErrNotExist) {
		s.log.Warn("static file", "path", r.URL.Path, "err", err)
	}
	s.writeError(&call{s: s, w: w, r: r}, httpError(404, ""))
}

// getOrHead answers 405 to anything but GET and HEAD.
func getOrHead(w http.ResponseWriter, r *http.Request, s *Server) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return true
	}
	w.Header().Set("Allow", "GET, HEAD")
	s.writeError(&call{s: s, w: w, r: r}, httpError(405, ""))
	return false
}
