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
	// Err is the key of an error, everywhere.
	Err = "err"
)
