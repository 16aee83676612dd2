package config

import (
	"os"
	"path/filepath"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
)

// masterOptions is every option of the master config Brine reads, with
// Salt's defaults (salt/config/__init__.py DEFAULT_MASTER_OPTS); see
// Option. Keys not here are kept in Raw and warned about.
var masterOptions = withShared([]Option[Master]{
	typed("root_dir", KindString, "/", "internal/config", func(m *Master) any { return &m.RootDir }),
	typed("pki_dir", KindString, "/etc/salt/pki/master", "cmd/salt-ssh", func(m *Master) any { return &m.PKIDir }),
	typed("cachedir", KindString, "/var/cache/salt/master", "sshexec/sshrun", func(m *Master) any { return &m.CacheDir }),
	typed("sock_dir", KindString, "/var/run/salt/master", "master", func(m *Master) any { return &m.SockDir }),
	typed("file_roots", KindRoots, roots("/srv/salt"), "sshexec/sshrun", func(m *Master) any { return &m.FileRoots }),
	typed("pillar_roots", KindRoots, roots("/srv/pillar"), "sshexec/sshrun", func(m *Master) any { return &m.PillarRoots }),
	typed("nodegroups", KindMapping, newMap, "sshexec/sshrun", func(m *Master) any { return &m.Nodegroups }),

	// salt-ssh (salt/client/ssh/__init__.py)
	typed("ssh_max_procs", KindInt, 25, "sshexec/sshrun", func(m *Master) any { return &m.SSHMaxProcs }),
	typed("ssh_user", KindString, "root", "sshexec/sshrun", func(m *Master) any { return &m.SSHUser }),
	typed("ssh_port", KindInt, 22, "sshexec/sshrun", func(m *Master) any { return &m.SSHPort }),
	seconds("ssh_timeout", time.Second, 60, "sshexec/sshrun", func(m *Master) any { return &m.SSHTimeout }),
	typed("ssh_sudo", KindBool, false, "sshexec/sshrun", func(m *Master) any { return &m.SSHSudo }),
	typed("ssh_sudo_user", KindString, "", "sshexec/sshrun", func(m *Master) any { return &m.SSHSudoUser }),
	typed("ssh_identities_only", KindBool, false, "sshexec/sshrun", func(m *Master) any { return &m.SSHIdentitiesOnly }),
	typed("ssh_config_file", KindString, homePath(".ssh", "config"), "sshexec/sshrun", func(m *Master) any { return &m.SSHConfigFile }),
	typed("ssh_run_pre_flight", KindBool, false, "sshexec/sshrun", func(m *Master) any { return &m.SSHRunPreFlight }),
	typed("known_hosts_file", KindString, homePath(".ssh", "known_hosts"), "sshexec/sshrun", func(m *Master) any { return &m.KnownHostsFile }),
	typed("thin_dir", KindString, "", "sshexec/sshrun", func(m *Master) any { return &m.ThinDir }),
	typed("roster_file", KindString, "", "roster", func(m *Master) any { return &m.RosterFile }),
	typed("roster_defaults", KindMapping, newMap, "sshexec/sshrun", func(m *Master) any { return &m.RosterDefaults }),
	typed("ssh_list_nodegroups", KindMapping, newMap, "sshexec/sshrun", func(m *Master) any { return &m.SSHListNodegroups }),
	seconds("cache_life", time.Minute, 60, "sshexec/sshrun", func(m *Master) any { return &m.CacheLife }),
	raw[Master]("roster", KindString, "sshexec/sshrun"),
	raw[Master]("ssh_priv", KindString, "sshexec/sshrun"),
	raw[Master]("ssh_scan_ports", KindAny, "sshexec/sshrun"),
	raw[Master]("ssh_scan_timeout", KindAny, "sshexec/sshrun"),
	raw[Master]("ssh_update_roster", KindBool, "sshexec/sshrun"),
	raw[Master]("ssh_remote_port_forwards", KindString, "sshexec/sshrun"),
	raw[Master]("ssh_keepalive", KindBool, "sshexec/sshrun"),
	raw[Master]("ssh_keepalive_interval", KindInt, "sshexec/sshrun"),
	raw[Master]("ssh_keepalive_count_max", KindInt, "sshexec/sshrun"),
	// salt-ssh's log file (cmd/salt-ssh/logfile.go).
	raw[Master]("ssh_log_file", KindString, "cmd/salt-ssh"),
	raw[Master]("log_level_logfile", KindString, "cmd/salt-ssh"),
	raw[Master]("log_file", KindString, "internal/daemon"),
	raw[Master]("log_fmt_logfile", KindString, "cmd/salt-ssh"),
	raw[Master]("log_datefmt_logfile", KindString, "cmd/salt-ssh"),
	raw[Master]("log_level", KindString, "thin"),
	// local: salt-call --local's option, which grains.setval also honours.
	raw[Master]("local", KindBool, "state/modules/grains"),
	// event.send and event.fire_master's local mode (state/modules/event).
	raw[Master]("master_type", KindString, "state/modules/event"),
	raw[Master]("use_master_when_local", KindBool, "state/modules/event"),

	// salt-master (salt/master.py, salt/crypt.py)
	typed("interface", KindString, "0.0.0.0", "master", func(m *Master) any { return &m.Interface }),
	raw[Master]("runner_returns", KindBool, "master"),
	typed("publish_port", KindInt, 4505, "master", func(m *Master) any { return &m.PublishPort }),
	typed("ret_port", KindInt, 4506, "master", func(m *Master) any { return &m.RetPort }),
	typed("worker_threads", KindInt, 5, "master", func(m *Master) any { return &m.WorkerThreads }),
	typed("auto_accept", KindBool, false, "master", func(m *Master) any { return &m.AutoAccept }),
	typed("open_mode", KindBool, false, "master", func(m *Master) any { return &m.OpenMode }),
	typed("autosign_file", KindString, "", "master", func(m *Master) any { return &m.AutosignFile }),
	typed("autoreject_file", KindString, "", "master", func(m *Master) any { return &m.AutorejectFile }),
	typed("autosign_grains_dir", KindString, "", "master", func(m *Master) any { return &m.AutosignGrainsDir }),
	typed("permissive_pki_access", KindBool, false, "master", func(m *Master) any { return &m.PermissivePKIAccess }),
	typed("max_minions", KindInt, 0, "master", func(m *Master) any { return &m.MaxMinions }),
	seconds("keep_jobs", time.Hour, 24, "master", func(m *Master) any { return &m.KeepJobs }),
	seconds("keep_jobs_seconds", time.Second, 86400, "master", func(m *Master) any { return &m.KeepJobsTime }),
	seconds("timeout", time.Second, 5, "master", func(m *Master) any { return &m.Timeout }),
	seconds("gather_job_timeout", time.Second, 10, "master", func(m *Master) any { return &m.GatherJobTimeout }),
	typed("zmq_filtering", KindBool, false, "master", func(m *Master) any { return &m.ZMQFiltering }),
	typed("rotate_aes_key", KindBool, true, "master", func(m *Master) any { return &m.RotateAESKey }),
	seconds("publish_session", time.Second, 86400, "master", func(m *Master) any { return &m.PublishSession }),
	typed("sign_pub_messages", KindBool, true, "master", func(m *Master) any { return &m.SignPubMessages }),
	seconds("request_server_ttl", time.Second, 0, "master", func(m *Master) any { return &m.RequestServerTTL }),
	typed("keysize", KindInt, 2048, "master", func(m *Master) any { return &m.KeySize }),
	raw[Master]("minion_data_cache", KindBool, "master"),
	// salt-ssh --relay (Brine's own options, docs/RELAY.md).
	raw[Master]("ssh_relay", KindBool, "sshexec/sshrun"),
	raw[Master]("ssh_relay_port", KindInt, "sshexec/sshrun"),
	raw[Master]("ssh_relay_transport", KindString, "sshexec/sshrun"),
	// Syndic trees (master/syndic.go on the upper master, syndic/ on the
	// syndic node, which reads its syndic_* options from this file).
	raw[Master]("order_masters", KindBool, "master"),
	raw[Master]("syndic_wait", KindInt, "master"),
	raw[Master]("master_id", KindString, "master"),
	raw[Master]("syndic_master", KindStrings, "syndic"),
	raw[Master]("syndic_master_port", KindInt, "syndic"),
	raw[Master]("syndic_event_forward_timeout", KindAny, "syndic"),
	raw[Master]("syndic_jid_forward_cache_hwm", KindInt, "syndic"),
	raw[Master]("syndic_failover", KindString, "syndic"),
	raw[Master]("syndic_log_file", KindString, "syndic"),
	raw[Master]("syndic_mode", KindString, "syndic"),
	raw[Master]("syndic_forward_all_events", KindBool, "syndic"),
	raw[Master]("syndic_retries", KindInt, "syndic"),
	raw[Master]("syndic_pidfile", KindString, "syndic"),
	raw[Master]("syndic_finger", KindString, "syndic"),
	raw[Master]("enable_legacy_startup_events", KindBool, "syndic"),

	raw[Master]("master_sign_pubkey", KindBool, "master"),
	raw[Master]("master_sign_key_name", KindString, "master"),
	raw[Master]("signing_key_pass", KindString, "master"),
	raw[Master]("key_pass", KindString, "master"),
	raw[Master]("master_use_pubkey_signature", KindBool, "master"),
	raw[Master]("master_pubkey_signature", KindString, "master"),
	// The job caches and event returners (master/jobcaches.go).
	raw[Master]("master_job_cache", KindString, "master"),
	raw[Master]("ext_job_cache", KindString, "master"),
	raw[Master]("job_cache", KindBool, "master"),
	raw[Master]("unique_jid", KindBool, "master"),
	raw[Master]("archive_jobs", KindBool, "master"),
	raw[Master]("loop_interval", KindInt, "master"),
	raw[Master]("conf_dir", KindString, "state/modules/schedule"),
	raw[Master]("schedule", KindAny, "master"),
	raw[Master]("event_return", KindAny, "master"),
	raw[Master]("event_return_queue", KindInt, "master"),
	raw[Master]("event_return_queue_max_seconds", KindInt, "master"),
	raw[Master]("event_return_whitelist", KindAny, "master"),
	raw[Master]("event_return_blacklist", KindAny, "master"),
	raw[Master]("job_cache_spool_max_bytes", KindInt, "master"),
	raw[Master]("enforce_mine_cache", KindBool, "master"),
	raw[Master]("mine_get", KindMapping, "master"),
	// The reactor (master/reactor.go) and peer publish (master/peer.go).
	raw[Master]("reactor", KindAny, "master"),
	raw[Master]("reactor_worker_threads", KindInt, "master"),
	raw[Master]("reactor_worker_hwm", KindInt, "master"),
	raw[Master]("reactor_niceness", KindAny, "master"),
	raw[Master]("reactor_refresh_interval", KindAny, "internal/reactor"),
	raw[Master]("peer", KindMapping, "master"),
	raw[Master]("peer_run", KindMapping, "master"),
	// external authentication (master/eauth.go, salt/auth/__init__.py)
	raw[Master]("external_auth", KindMapping, "master"),
	raw[Master]("eauth_tokens", KindString, "master"),
	raw[Master]("token_expire", KindAny, "master"),
	raw[Master]("token_expire_user_override", KindAny, "master"),
	raw[Master]("keep_acl_in_token", KindBool, "master"),
	raw[Master]("permissive_acl", KindBool, "master"),
	raw[Master]("eauth_acl_module", KindString, "master"),
	raw[Master]("auth.enable_expanded_auth_matching", KindBool, "master"),
	raw[Master]("sharedsecret", KindString, "master"),
	raw[Master]("publisher_acl", KindMapping, "master"),
	raw[Master]("publisher_acl_blacklist", KindMapping, "master"),
	raw[Master]("sudo_acl", KindBool, "master"),
	raw[Master]("auth.pam.service", KindString, "cmd/salt-master"),
	raw[Master]("token_file", KindString, "internal/eauthcli"),
	// What a _master_opts reply carries (master/masteropts.go).
	raw[Master]("top_file_merging_strategy", KindString, "master"),
	raw[Master]("env_order", KindAny, "master"),
	raw[Master]("default_top", KindString, "master"),
	raw[Master]("state_top", KindString, "master"),
	raw[Master]("state_top_saltenv", KindString, "master"),
	raw[Master]("state_events", KindBool, "master"),
	raw[Master]("jinja_env", KindMapping, "master"),
	raw[Master]("jinja_sls_env", KindMapping, "master"),
	raw[Master]("jinja_lstrip_blocks", KindBool, "master"),
	raw[Master]("jinja_trim_blocks", KindBool, "master"),

	// the CLI clients
	raw[Master]("default_include", KindString, "internal/config"),
	raw[Master]("output", KindString, "cmd/salt-ssh"),
	raw[Master]("color", KindBool, "cmd/salt-ssh"),
	raw[Master]("cli_summary", KindBool, "cmd/salt"),
	raw[Master]("state_output_diff", KindBool, "cmd/salt"),
	raw[Master]("preserve_minion_cache", KindBool, "cmd/salt-key"),
	raw[Master]("salt_cp_chunk_size", KindInt, "cmd/salt-cp"),
	raw[Master]("salt_cp_relay", KindBool, "cmd/salt-cp"),
	raw[Master]("salt_cp_relay_port", KindInt, "cmd/salt-cp"),

	// salt-api (netapi): its own section, the clients it may run and the
	// roster directories its ssh client may read.
	raw[Master]("rest_cherrypy", KindMapping, "netapi"),
	raw[Master]("netapi_enable_clients", KindAny, "netapi"),
	raw[Master]("netapi_allow_raw_shell", KindBool, "netapi"),
	raw[Master]("rosters", KindAny, "netapi"),
})

// typed is a table entry with a field.
func typed[T any](key string, kind Kind, def any, reader string, field func(*T) any) Option[T] {
	return Option[T]{Key: key, Kind: kind, Default: def, Reader: reader, Field: field}
}

// seconds is a typed KindDuration entry counted in unit.
func seconds[T any](key string, unit time.Duration, def any, reader string, field func(*T) any) Option[T] {
	return Option[T]{Key: key, Kind: KindDuration, Unit: unit, Default: def, Reader: reader, Field: field}
}

// withShared appends the state layer's options the daemon table does
// not already have.
func withShared[T any](table []Option[T]) []Option[T] {
	have := map[string]bool{}
	for _, o := range table {
		if have[o.Key] {
			panic("config: option " + o.Key + " is in the table twice")
		}
		have[o.Key] = true
	}
	for _, o := range sharedOptions[T]() {
		if !have[o.Key] {
			table = append(table, o)
		}
	}
	return table
}

func newMap() any { return ordered.New() }

// roots is a file_roots-style default with one base directory.
func roots(dir string) func() any {
	return func() any { return ordered.FromPairs("base", []any{dir}) }
}

// homePath is a default under the user's home directory, read when the
// default is set.
func homePath(elem ...string) func() any {
	return func() any {
		home, _ := os.UserHomeDir()
		return filepath.Join(append([]string{home}, elem...)...)
	}
}
