// Package relay moves large files to many hosts so that the controller's
// uplink carries each byte about once: files are cut into content-addressed
// chunks (sha256), a controller-side Coordinator tells every host's Agent
// where to fetch each chunk (a peer that holds a verified copy, or the
// controller itself over the host's SSH session), every chunk is verified on
// arrival, a host serves only chunks it has verified, and a file is renamed
// into place only once its whole hash matches. docs/RELAY.md gives the
// design and its threat model.
//
// The controller and the agent talk in lines over the SSH session: the
// controller writes a Header and then commands (Cmd) on the agent's stdin;
// the agent writes events (Event) on its stdout. Peers talk to each other
// over TCP, every message sealed with AES-256-GCM under the run's key,
// which only the controller and the hosts of this run know.
package relay
