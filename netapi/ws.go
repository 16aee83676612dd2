package netapi

import (
	"context"
	"errors"

	"github.com/coder/websocket"

	"github.com/brinesalt/brine/internal/logattr"
)

// websocket is WebsocketEndpoint.GET (/ws/<token>, /ws?token=, or the
// session cookie): after the client sends "websocket client ready" the
// master's events follow, each a text message "data: <json>\n\n", or,
// with ?format_events, SaltInfo's summaries of jobs and minions
// (rest_cherrypy/event_processor.py). Every message the client sends is
// answered "server received message" (SynchronizingWebsocket). The
// token must be a session id; its eauth token must be valid.
func (s *Server) websocket(c *call) (any, error) {
	v := argOrParam(c, "token")
	fromCookie := v == ""
	if fromCookie {
		v = c.sid
	}
	auth, ok := s.resolveToken(c.ctx, v, true)
	if !ok {
		return nil, httpError(401, "")
	}
	// A browser sends the cookie to any site's websocket: with
	// cookie-only auth the page must be of this origin (coder/websocket's
	// check). A token in the URL is proof enough, as in Salt.
	conn, err := websocket.Accept(c.w, c.r, &websocket.AcceptOptions{InsecureSkipVerify: !fromCookie})
	if err != nil {
		s.log.Warn("websocket handshake", logattr.Err, err)
		return nil, nil
	}
	defer conn.CloseNow()
	ctx, cancel := context.WithCancel(c.ctx)
	defer cancel()
	ready := make(chan struct{})
	go s.wsRead(ctx, cancel, conn, ready)
	select {
	case <-ready:
	case <-ctx.Done():
		return nil, nil
	}
	sub := s.hub.subscribe(streamBuffer, false)
	defer s.hub.unsubscribe(sub)
	send := func(text string) bool {
		wctx, wcancel := context.WithTimeout(ctx, streamWriteTimeout)
		defer wcancel()
		return conn.Write(wctx, websocket.MessageText, []byte(text)) == nil
	}
	var info *saltInfo
	if c.r.URL.Query().Has("format_events") {
		info = newSaltInfo(s, auth.token, send)
	}
	s.streamEvents(ctx, auth, sub, func(ev *hubEvent) bool {
		if info != nil {
			return info.process(ctx, ev)
		}
		return send("data: " + string(ev.JSON()) + "\n\n")
	})
	conn.Close(websocket.StatusNormalClosure, "")
	return nil, nil
}

// wsRead reads the client's messages: "websocket client ready" starts
// the stream, every message is acknowledged; the connection ending ends
// the stream.
func (s *Server) wsRead(ctx context.Context, cancel context.CancelFunc, conn *websocket.Conn, ready chan struct{}) {
	defer cancel()
	started := false
	for {
		_, msg, err := conn.Read(ctx)
		if err != nil {
			if !errors.Is(err, context.Canceled) && websocket.CloseStatus(err) == -1 {
				s.log.Debug("websocket read", logattr.Err, err)
			}
			return
		}
		if string(msg) == "websocket client ready" && !started {
			started = true
			close(ready)
		}
		wctx, wcancel := context.WithTimeout(ctx, streamWriteTimeout)
		err = conn.Write(wctx, websocket.MessageText, []byte("server received message"))
		wcancel()
		if err != nil {
			return
		}
	}
}
