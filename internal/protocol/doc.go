// Package protocol is the wire format Salt's master and minion speak,
// shared by Brine's master and minion: msgpack exactly as salt/payload.py
// writes and reads it, the request envelope of salt/channel/client.py and
// salt/channel/server.py, the typed loads carried inside it (_auth,
// publish, _return), job ids and event tags.
//
// Values follow Brine's model (internal/ordered): nil, bool, int, float64,
// string, []any and *ordered.Map, plus []byte for raw data that is not
// UTF-8, time.Time for Salt's datetime extension (78) and Constant for its
// constant extension (79).
package protocol
