package netapi

import (
	"archive/tar"
	"bytes"
	"fmt"
	"net/http"
	"os"
	"slices"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/master"
)

// endpoints is rest_cherrypy's url_map (API._setattr_url_map): without
// enable_sessions, the endpoints that need a session are gone.
func (s *Server) endpoints() map[string]*endpoint {
	eps := map[string]*endpoint{
		"": {methods: map[string]*method{
			http.MethodGet:  {h: s.index, params: []string{}},
			http.MethodPost: {h: s.postIndex, sessions: true, auth: true},
		}},
		"login": {methods: map[string]*method{
			http.MethodGet:  {h: s.loginPage, sessions: true, params: []string{}},
			http.MethodPost: {h: s.login, sessions: true},
		}},
		"logout": {methods: map[string]*method{http.MethodPost: {h: s.logout, sessions: true, auth: true, params: []string{}}}},
		"token":  {methods: map[string]*method{http.MethodPost: {h: s.mkToken}}},
		"run":    {methods: map[string]*method{http.MethodPost: {h: s.run}}},
		"minions": {maxArgs: 1, methods: map[string]*method{
			http.MethodGet:  {h: s.minions, sessions: true, auth: true, params: []string{"mid"}},
			http.MethodPost: {h: s.postMinions, sessions: true, auth: true},
		}},
		"jobs": {maxArgs: 1, methods: map[string]*method{
			http.MethodGet: {h: s.jobs, sessions: true, auth: true, params: []string{"jid", "timeout"}},
		}},
		"keys": {maxArgs: 1, methods: map[string]*method{
			http.MethodGet:  {h: s.keys, sessions: true, params: []string{"mid"}},
			http.MethodPost: {h: s.genKeys},
		}},
		"events": {methods: map[string]*method{
			http.MethodGet: {h: s.events, sessions: true, stream: true, params: []string{"token", "salt_token"}},
		}},
		"ws": {maxArgs: 1, methods: map[string]*method{
			http.MethodGet: {h: s.websocket, sessions: true, stream: true},
		}},
		"stats": {methods: map[string]*method{
			http.MethodGet: {h: s.statsPage, sessions: true, auth: !s.cfg.StatsDisableAuth, params: []string{}},
		}},
	}
	if !s.cfg.EnableSessions {
		for _, name := range []string{"login", "logout", "minions", "jobs"} {
			delete(eps, name)
		}
	}
	return eps
}

// index is LowDataAdapter.GET.
func (s *Server) index(*call) (any, error) {
	return ordered.FromPairs("return", "Welcome", "clients", strList(Clients)), nil
}

// postIndex is LowDataAdapter.POST: the lowstate with the session's
// token.
func (s *Server) postIndex(c *call) (any, error) {
	ret, err := s.execLowstate(c, c.body.Data, c.token(), "")
	if err != nil {
		return nil, err
	}
	return ordered.FromPairs("return", ret), nil
}

// run is Run.POST: each chunk brings its own credentials.
func (s *Server) run(c *call) (any, error) {
	ret, err := s.execLowstate(c, c.body.Data, "", "")
	if err != nil {
		return nil, err
	}
	return ordered.FromPairs("return", ret), nil
}

// execLowstate is LowDataAdapter.exec_lowstate: every chunk prepared
// and run in turn; a client returning many results adds them all.
func (s *Server) execLowstate(c *call, data any, token, client string) ([]any, error) {
	chunks, err := Lowstate(data)
	if err != nil {
		return nil, err
	}
	out := []any{}
	for _, chunk := range chunks {
		if err := prepareChunk(chunk, token, client); err != nil {
			return nil, err
		}
		ret, err := s.runChunk(c.ctx, chunk)
		if err != nil {
			return nil, err
		}
		if m, ok := ret.(many); ok {
			out = append(out, m...)
			continue
		}
		out = append(out, ret)
	}
	return out, nil
}

// loginPage is Login.GET.
func (s *Server) loginPage(c *call) (any, error) {
	c.w.Header().Set("WWW-Authenticate", "Session")
	return ordered.FromPairs("status", nil, "return", "Please log in"), nil
}

// login is Login.POST: the credentials (the first chunk) make an eauth
// token on the master, kept in a session whose id is the answer's
// token.
func (s *Server) login(c *call) (any, error) {
	if _, err := os.Stat(s.sock); err != nil {
		return nil, errMasterDown(err)
	}
	creds, ok := firstChunk(c.body.Data)
	if !ok {
		return nil, fmt.Errorf("login: no credentials in the body")
	}
	username := str(creds.Value("username"))
	if !s.apiACL(username, remoteIP(c.r)) {
		return nil, httpError(401, "")
	}
	exp, _ := ordered.Number(creds.Value("token_expire"))
	mc := master.Creds{Eauth: str(creds.Value("eauth")), Username: username, Password: str(creds.Value("password"))}
	if mc.Eauth == "" {
		return nil, httpError(401, "Could not authenticate using provided credentials")
	}
	var td *ordered.Map
	err := s.pool.with(c.ctx, func(cl *master.Client) error {
		var e error
		td, e = cl.MkToken(c.ctx, mc, exp)
		return e
	})
	if err != nil {
		if he, ok := asHTTPError(err); ok && he.Code == 503 {
			return nil, err
		}
		return nil, httpError(401, "Could not authenticate using provided credentials")
	}
	tok, _ := td.Value("token").(string)
	if tok == "" {
		return nil, httpError(401, "Could not authenticate using provided credentials")
	}
	c.sess = s.sessions.login(c.sid, tok, time.Now())
	c.w.Header().Set("X-Auth-Token", c.sess.id)
	var perms any = ordered.New()
	if l, ok := td.Value("perms").([]any); ok && len(l) > 0 {
		perms = sortedPermissions(l)
	}
	return ordered.FromPairs("return", []any{ordered.FromPairs("token", c.sess.id, "expire", td.Value("expire"),
		"start", td.Value("start"), "user", td.Value("name"), "eauth", td.Value("eauth"), "perms", perms)}), nil
}

// firstChunk is the credentials of a /login body: the first item of a
// list, or the mapping itself.
func firstChunk(data any) (*ordered.Map, bool) {
	if l, ok := data.([]any); ok {
		if len(l) == 0 {
			return nil, false
		}
		data = l[0]
	}
	m, ok := data.(*ordered.Map)
	return m, ok
}

// sortedPermissions is salt.netapi.sorted_permissions: the strings
// sorted and de-duplicated, then the rest sorted by repr.
func sortedPermissions(perms []any) []any {
	var strs []string
	var others []any
	seen := map[string]bool{}
	for _, p := range perms {
		if s, ok := p.(string); ok {
			if !seen[s] {
				seen[s] = true
				strs = append(strs, s)
			}
			continue
		}
		if !slices.ContainsFunc(others, func(o any) bool { return ordered.Equal(o, p) }) {
			others = append(others, p)
		}
	}
	slices.Sort(strs)
	slices.SortStableFunc(others, func(a, b any) int {
		ra, rb := py.Repr(a), py.Repr(b)
		switch {
		case ra < rb:
			return -1
		case ra > rb:
			return 1
		}
		return 0
	})
	out := make([]any, 0, len(strs)+len(others))
	for _, s := range strs {
		out = append(out, s)
	}
	return append(out, others...)
}

// apiACL is salt_api_acl_tool: rest_cherrypy's api_acl users may log in
// only from their listed addresses ("*" any); without api_acl anyone
// may.
func (s *Server) apiACL(user, ip string) bool {
	acl := s.cfg.APIACL
	if acl == nil {
		return true
	}
	ips, ok := acl[user]
	if !ok {
		if ips, ok = acl["*"]; !ok {
			return false
		}
	}
	return slices.Contains(ips, ip) || slices.Contains(ips, "*")
}

// logout is Logout.POST: the session ends and, unlike Salt, which
// leaves it in its store, the eauth token it held is removed.
func (s *Server) logout(c *call) (any, error) {
	tok := c.sess.token
	s.sessions.logout(c.sess.id)
	if err := s.pool.with(c.ctx, func(cl *master.Client) error { return cl.DelToken(c.ctx, tok) }); err != nil {
		s.log.Warn("logout: the master did not remove the eauth token", "err", err)
	}
	c.expireCookie = true
	return ordered.FromPairs("return", "Your token has been cleared"), nil
}

// mkToken is Token.POST: an eauth token per set of credentials, as the
// runner auth.mk_token makes them; the answer is a bare list.
func (s *Server) mkToken(c *call) (any, error) {
	chunks, err := Lowstate(c.body.Data)
	if err != nil {
		return nil, err
	}
	out := []any{}
	for _, creds := range chunks {
		if !creds.Has("username") || !creds.Has("password") || !creds.Has("eauth") {
			return nil, httpError(400, `Require "username", "password", and "eauth" params`)
		}
		mc := master.Creds{Eauth: str(creds.Value("eauth")), Username: str(creds.Value("username")),
			Password: str(creds.Value("password"))}
		if mc.Eauth == "" {
			return nil, httpError(401, "Authentication error occurred.")
		}
		exp, _ := ordered.Number(creds.Value("token_expire"))
		var td *ordered.Map
		err := s.pool.with(c.ctx, func(cl *master.Client) error {
			var e error
			td, e = cl.MkToken(c.ctx, mc, exp)
			return e
		})
		if err != nil {
			return nil, authErr(err)
		}
		td = td.Copy()
		td.Delete("perms")
		out = append(out, td)
	}
	return out, nil
}

// minions is Minions.GET: grains.items of one minion or all.
func (s *Server) minions(c *call) (any, error) {
	mid := argOrParam(c, "mid")
	if mid == "" {
		mid = "*"
	}
	low := ordered.FromPairs("client", "local", "tgt", mid, "fun", "grains.items")
	ret, err := s.execLowstate(c, []any{low}, c.token(), "")
	if err != nil {
		return nil, err
	}
	return ordered.FromPairs("return", ret), nil
}

// postMinions is Minions.POST: the lowstate as local_async, 202 with
// links to the jobs.
func (s *Server) postMinions(c *call) (any, error) {
	ret, err := s.execLowstate(c, c.body.Data, c.token(), "local_async")
	if err != nil {
		return nil, err
	}
	links := []any{}
	for _, r := range ret {
		if m, ok := r.(*ordered.Map); ok && m.Len() > 0 {
			links = append(links, ordered.FromPairs("href", "/jobs/"+str(m.Value("jid"))))
		}
	}
	c.status = http.StatusAccepted
	return ordered.FromPairs("return", ret, "_links", ordered.FromPairs("jobs", links)), nil
}

// jobs is Jobs.GET: jobs.list_jobs, or jobs.list_job of one jid with
// its returns split out.
func (s *Server) jobs(c *call) (any, error) {
	jid := argOrParam(c, "jid")
	low := ordered.FromPairs("client", "runner", "fun", "jobs.list_jobs")
	if jid != "" {
		low = ordered.FromPairs("client", "runner", "fun", "jobs.list_job", "jid", jid)
	}
	ret, err := s.execLowstate(c, []any{low}, c.token(), "")
	if err != nil {
		return nil, err
	}
	if jid == "" {
		return ordered.FromPairs("return", []any{ret[0]}), nil
	}
	rets := ordered.New()
	if info, ok := ret[0].(*ordered.Map); ok {
		if res, ok := info.Value("Result").(*ordered.Map); ok {
			res.Range(func(k, v any) bool {
				if m, ok := v.(*ordered.Map); ok {
					rets.Set(k, m.Value("return"))
				}
				return true
			})
		}
	}
	return ordered.FromPairs("info", []any{ret[0]}, "return", []any{rets}), nil
}

// keys is Keys.GET: wheel key.list_all, or key.finger of one minion;
// the answer is the wheel function's return.
func (s *Server) keys(c *call) (any, error) {
	low := ordered.FromPairs("client", "wheel", "fun", "key.list_all")
	if mid := argOrParam(c, "mid"); mid != "" {
		low = ordered.FromPairs("client", "wheel", "fun", "key.finger", "match", mid)
	}
	ret, err := s.execLowstate(c, []any{low}, c.token(), "")
	if err != nil {
		return nil, err
	}
	return ordered.FromPairs("return", wheelReturn(ret)), nil
}

// wheelReturn is next(result, {}).get("data", {}).get("return", {}).
func wheelReturn(ret []any) any {
	if len(ret) == 0 {
		return ordered.New()
	}
	m, _ := ret[0].(*ordered.Map)
	data, _ := m.Value("data").(*ordered.Map)
	if v, ok := data.Get("return"); ok {
		return v
	}
	return ordered.New()
}

// genKeys is Keys.POST: wheel key.gen_accept for the form's mid, with
// the caller's eauth credentials, answered as a tar of minion.pub and
// minion.pem.
func (s *Server) genKeys(c *call) (any, error) {
	chunks, err := Lowstate(c.body.Data)
	if err != nil {
		return nil, err
	}
	low := chunks[0]
	low.Set("client", "wheel")
	low.Set("fun", "key.gen_accept")
	if v, ok := low.Get("mid"); ok {
		low.Delete("mid")
		low.Set("id_", v)
	}
	ret, err := s.execLowstate(c, []any{low}, "", "")
	if err != nil {
		return nil, err
	}
	keys, ok := wheelReturn(ret).(*ordered.Map)
	if !ok {
		return nil, fmt.Errorf("key.gen_accept: %v", py.Str(wheelReturn(ret)))
	}
	tb, err := keyTar(str(keys.Value("pub")), str(keys.Value("priv")))
	if err != nil {
		return nil, err
	}
	h := c.w.Header()
	h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="saltkeys-%s.tar"`, str(low.Value("id_"))))
	h.Set("Content-Type", "application/x-tar")
	h.Set("Content-Length", fmt.Sprint(len(tb)))
	h.Set("Cache-Control", "no-cache")
	c.w.WriteHeader(http.StatusOK)
	if c.r.Method != http.MethodHead {
		_, _ = c.w.Write(tb)
	}
	c.status = 0
	return nil, nil
}

// keyTar is the tarball Keys.POST builds: minion.pub then minion.pem.
func keyTar(pub, priv string) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range []struct{ name, data string }{{"minion.pub", pub}, {"minion.pem", priv}} {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.data)), Format: tar.FormatPAX}); err != nil {
			return nil, err
		}
		if _, err := tw.Write([]byte(f.data)); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// statsPage is Stats.GET.
func (s *Server) statsPage(*call) (any, error) {
	return s.stats.report(s.hub.count()), nil
}

// argOrParam is a handler's one positional argument, from the path
// (/minions/<mid>) or the query string (?mid=).
func argOrParam(c *call, name string) string {
	if len(c.args) > 0 {
		return c.args[0]
	}
	return c.r.URL.Query().Get(name)
}
