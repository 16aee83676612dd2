package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/brinesalt/brine/internal/targetopt"
)

// options mirror salt/utils/parsers.py SaltSSHOptionParser and the mixins
// it uses (ConfigDir, LogLevel, TargetOptions, OutputOptions, Saltfile).
// Flags may come before or after the target, as Salt users type them.
type options struct {
	configDir  string
	logLevel   string
	logFile    string // --log-file, ssh_log_file
	logFileLvl string // --log-file-level, log_level_logfile
	raw        bool
	roster     string
	rosterFile string
	refresh    bool
	maxProcs   int
	verbose    bool
	static     bool
	summary    bool // --summary: see summary.go
	wipe       bool
	randThin   bool
	regenThin  bool
	relay      bool
	preFlight  bool
	sshOptions []string
	priv       string
	ignoreKeys bool
	noHostKeys bool
	user       string
	identOnly  bool
	sudo       bool
	timeout    int
	jid        string

	saltfile      string  // --saltfile; see applySaltfile
	scanPorts     string  // --scan-ports, ssh_scan_ports for the scan roster
	scanTimeout   float64 // --scan-timeout in seconds, ssh_scan_timeout
	updateRoster  bool    // --update-roster: append ad-hoc targets to the flat roster
	remoteFwds    string  // --remote-port-forwards, ssh_remote_port_forwards
	extraFilerefs string  // --extra-filerefs: accepted; Brine ships no file client yet

	// passwd (--passwd, ssh_passwd) is the default SSH password for
	// targets whose roster entry has none, and the sudo password.
	passwd string
	// askpass (--askpass, ssh_askpass) prompts for that password on the
	// terminal instead.
	askpass bool
	// privPasswd (--priv-passwd, ssh_priv_passwd) is the passphrase of
	// the private key.
	privPasswd string
	// keyDeploy (--key-deploy, ssh_key_deploy) installs the salt-ssh
	// public key on hosts reached by password.
	keyDeploy bool

	targets *targetopt.Options
	tgtType string // the tgt_type targets chose, once parsed

	out       string
	outIndent int
	outFile   string
	outAppend bool
	noColor   bool
	forceCol  bool
	stateOut  string
	stateVerb string

	// Set explicitly on the command line (pflag's Changed), so that
	// config values are only overridden by flags the user gave.
	set map[string]bool

	target string
	fun    string
	args   []string
}

// newFlagSet builds the option table; the test pins it.
// sshTargets are salt-ssh's target options (SaltSSHOptionParser takes
// ExtendedTargetOptionsMixIn, with range).
var sshTargets = append(targetopt.Extended[:len(targetopt.Extended):len(targetopt.Extended)], targetopt.Range)

func newFlagSet(o *options, stderr io.Writer) *pflag.FlagSet {
	fs := pflag.NewFlagSet("salt-ssh", pflag.ContinueOnError)
	fs.SetInterspersed(true)
	fs.SetOutput(stderr)
	fs.SortFlags = false
	def := os.Getenv("SALT_CONFIG_DIR")
	if def == "" {
		def = "/etc/salt"
	}
	fs.StringVarP(&o.configDir, "config-dir", "c", def, "Pass in an alternative configuration directory.")
	fs.StringVarP(&o.logLevel, "log-level", "l", "warning", "Console logging log level: all, garbage, trace, debug, profile, info, warning, error, critical, quiet.")
	fs.StringVar(&o.logFile, "log-file", "", "Log file path. Default: ssh_log_file, '/var/log/salt/ssh'.")
	fs.StringVar(&o.logFileLvl, "log-file-level", "", "Logfile logging log level: all, garbage, trace, debug, profile, info, warning, error, critical, quiet. Default: log_level_logfile, else log_level, 'warning'.")
	fs.BoolVarP(&o.raw, "raw", "r", false, "Don't execute a salt routine on the targets, execute a raw shell command.")
	fs.BoolVar(&o.raw, "raw-shell", false, "Alias of --raw.")
	fs.StringVar(&o.roster, "roster", "flat", "Define which roster system to use: flat, ansible, sshconfig, scan; comma-separated to merge several, backend=PATH to give one its own file (flat,ansible=/etc/ansible/hosts).")
	fs.StringVar(&o.rosterFile, "roster-file", "", "Define an alternative location for the default roster file.")
	fs.BoolVar(&o.refresh, "refresh", false, "Force a refresh of the master side data cache of the target's data.")
	fs.BoolVar(&o.refresh, "refresh-cache", false, "Alias of --refresh.")
	fs.IntVar(&o.maxProcs, "max-procs", 25, "Set the number of concurrent minions to communicate with.")
	fs.BoolVarP(&o.verbose, "verbose", "v", false, "Turn on command verbosity, display jid and per-host timings.")
	fs.BoolVarP(&o.static, "static", "s", false, "Return the data from minions as a group after they all return.")
	fs.BoolVar(&o.summary, "summary", false, "Print the totals and the failed hosts first, then the failed hosts' returns, then the others (Brine; Salt's salt-ssh has no --summary).")
	fs.BoolVarP(&o.wipe, "wipe", "w", false, "Remove the deployment of the salt files when done executing.")
	fs.BoolVarP(&o.randThin, "rand-thin-dir", "W", false, "Select a random temp dir to deploy on the remote system; implies --wipe.")
	// Salt's salt-ssh uses -t for --regen-thin, not for a timeout
	// (salt/utils/parsers.py); Brine keeps that meaning: resend the thin
	// binary even where it is present.
	fs.BoolVarP(&o.regenThin, "regen-thin", "t", false, "Force the thin binary to be sent again.")
	fs.BoolVar(&o.regenThin, "thin", false, "Alias of --regen-thin.")
	// Brine's own: Salt pushes every byte from the master (docs/RELAY.md).
	fs.BoolVar(&o.relay, "relay", false, "Pass large salt:// files from host to host in verified chunks, so the controller's uplink carries each byte about once (ssh_relay_port names the TCP port hosts serve on).")
	fs.BoolVar(&o.preFlight, "pre-flight", false, "Run the ssh_pre_flight script even if the thin dir exists.")
	fs.StringArrayVar(&o.sshOptions, "ssh-option", nil, "Equivalent to -o ssh command option; may be repeated.")
	fs.StringVar(&o.priv, "priv", "", "Ssh private key file.")
	fs.BoolVarP(&o.ignoreKeys, "ignore-host-keys", "i", false, "Accept unknown host keys and record them (StrictHostKeyChecking=no); a changed key is still refused.")
	fs.BoolVar(&o.noHostKeys, "no-host-keys", false, "Do not check or record host keys at all.")
	fs.StringVar(&o.user, "user", "root", "Set the default user to attempt to use when authenticating.")
	fs.BoolVar(&o.identOnly, "identities-only", false, "Use only the authentication identity files configured (IdentitiesOnly=yes).")
	fs.BoolVar(&o.sudo, "sudo", false, "Run command via sudo.")
	fs.IntVar(&o.timeout, "timeout", 0, "Seconds to wait for each host's SSH connection (default: ssh_timeout, 60).")
	fs.StringVar(&o.jid, "jid", "", "Pass a JID to be used instead of generating one.")
	fs.StringVar(&o.saltfile, "saltfile", "", "Specify the path to a Saltfile. If not passed, one will be searched for in the current working directory.")
	fs.StringVar(&o.extraFilerefs, "extra-filerefs", "", "Pass in extra files to include in the state tarball (accepted, not used yet).")
	fs.StringVar(&o.remoteFwds, "remote-port-forwards", "", "Setup remote port forwarding using the same syntax as with the -R parameter of ssh. A comma separated list of port forwarding definitions.")
	fs.StringVar(&o.passwd, "passwd", "", "Set the default password to attempt to use when authenticating.")
	fs.BoolVar(&o.askpass, "askpass", false, "Interactively ask for the SSH password with no echo.")
	fs.StringVar(&o.privPasswd, "priv-passwd", "", "Passphrase for ssh private key file.")
	fs.BoolVar(&o.keyDeploy, "key-deploy", false, "Set this flag to attempt to deploy the authorized ssh key with all minions.")
	fs.BoolVar(&o.updateRoster, "update-roster", false, "If hostname is not found in the roster, store the information into the default roster file (flat).")
	fs.StringVar(&o.scanPorts, "scan-ports", "22", "Comma-separated list of ports to scan in the scan roster.")
	fs.Float64Var(&o.scanTimeout, "scan-timeout", 0.01, "Scanning socket timeout for the scan roster.")

	o.targets = targetopt.Register(fs, sshTargets, map[string]string{
		"grain": "target by grain value (key:value), from the controller's grains cache"})

	fs.StringVar(&o.out, "out", "", "Print the output using the named outputter (nested, json, yaml, txt, raw, highstate, …).")
	fs.StringVar(&o.out, "output", "", "Alias of --out.")
	fs.IntVar(&o.outIndent, "out-indent", -1, "Print the output indented by this many spaces.")
	fs.StringVar(&o.outFile, "out-file", "", "Write the output to the named file.")
	fs.BoolVar(&o.outAppend, "out-file-append", false, "Append the output to --out-file instead of truncating it.")
	fs.BoolVar(&o.noColor, "no-color", false, "Disable all colored output.")
	fs.BoolVar(&o.forceCol, "force-color", false, "Force colored output.")
	fs.StringVar(&o.stateOut, "state-output", "", "Highstate output mode: full, terse, mixed, changes, filter.")
	fs.StringVar(&o.stateVerb, "state-verbose", "", "Set to false to hide results with no changes.")
	return fs
}

// parseArgs parses argv (without the program name).
func parseArgs(argv []string, stderr io.Writer) (*options, error) {
	o := &options{set: map[string]bool{}}
	fs := newFlagSet(o, stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: salt-ssh [options] '<target>' <function> [arguments]\n\nOptions:\n%s", fs.FlagUsages())
	}
	if err := fs.Parse(argv); err != nil {
		return nil, err
	}
	if err := applySaltfile(fs, o, stderr); err != nil {
		return nil, err
	}
	fs.Visit(func(f *pflag.Flag) { o.set[f.Name] = true })
	rest := fs.Args()
	if len(rest) < 2 {
		return nil, fmt.Errorf("salt-ssh needs a target and a function (or a shell command with -r)")
	}
	o.target = rest[0]
	var err error
	if o.tgtType, err = o.targets.Type(); err != nil {
		return nil, err
	}
	if o.raw {
		o.args = rest[1:]
	} else {
		o.fun, o.args = rest[1], rest[2:]
	}
	if o.randThin {
		o.wipe = true
	}
	return o, nil
}

// rawCommand joins the -r arguments with spaces for the remote shell.
// Salt backslash-escapes every argument (Single._escape_arg) and then
// shlex-splits the whole ssh command line locally (shell.py _split_cmd),
// which removes the escapes again, and ssh joins its arguments with
// spaces: the remote shell sees the arguments joined by spaces.
func (o *options) rawCommand() string { return strings.Join(o.args, " ") }
