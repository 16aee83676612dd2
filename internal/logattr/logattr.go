// Package logattr names the slog attribute keys Brine logs with, so that
// every package spells them alike and log queries stay stable.
package logattr

// Attribute keys.
const (
	Host    = "host"
	JID     = "jid"
	Fun     = "fun"
	StateID = "state_id"
	Phase   = "phase"
	Elapsed = "elapsed"
	// User is the user a request runs as; Eauth its eauth backend.
	User  = "user"
	Eauth = "eauth"
	// Err is the key of an error, everywhere.
	Err = "err"
)

// Keys of the reactor's log lines: the event's tag and the SLS file.
const (
	Tag  = "tag"
	File = "file"
)
