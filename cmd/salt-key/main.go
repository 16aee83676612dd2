// Command salt-key manages the master's minion keys as Salt's salt-key
// does (salt/cli/key.py, salt/key.py KeyCLI): list, accept, reject,
// delete, print and fingerprint keys in pki_dir, and generate key pairs.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/brinesalt/brine/internal/config"
	"github.com/brinesalt/brine/internal/crypt"
	"github.com/brinesalt/brine/internal/logging"
	"github.com/brinesalt/brine/internal/shutdown"
	"github.com/brinesalt/brine/output"
)

func main() {
	ctx, stop := shutdown.Context(nil, "")
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// options are salt-key's command-line options (salt/utils/parsers.py
// SaltKeyOptionParser).
type options struct {
	list, accept, reject, print, delete, finger                   string
	listAll, acceptAll, rejectAll, printAll, deleteAll, fingerAll bool
	includeAll, includeAccepted, includeRejected, includeDenied   bool
	quiet, yes                                                    bool
	rotateAESKey, preserveMinions                                 string
	genKeys, genKeysDir                                           string
	genSignature, autoCreate                                      bool
	priv, pub, signaturePath                                      string
	keySize                                                       int
	configDir, out, logLevel, user                                string
	outIndent                                                     int
	noColor, forceColor                                           bool
}

func newFlagSet(o *options, stderr io.Writer) *pflag.FlagSet {
	fs := pflag.NewFlagSet("salt-key", pflag.ContinueOnError)
	fs.SetInterspersed(true)
	fs.SetOutput(stderr)
	fs.StringVarP(&o.list, "list", "l", "", "list keys: pre/un/unaccepted, acc/accepted, rej/rejected, den/denied or all")
	fs.BoolVarP(&o.listAll, "list-all", "L", false, "list all public keys")
	fs.StringVarP(&o.accept, "accept", "a", "", "accept the matching pending keys (globs)")
	fs.BoolVarP(&o.acceptAll, "accept-all", "A", false, "accept all pending keys")
	fs.StringVarP(&o.reject, "reject", "r", "", "reject the matching pending keys (globs)")
	fs.BoolVarP(&o.rejectAll, "reject-all", "R", false, "reject all pending keys")
	fs.BoolVar(&o.includeAll, "include-all", false, "include rejected/accepted keys when accepting/rejecting")
	fs.BoolVar(&o.includeAccepted, "include-accepted", false, "include accepted keys when rejecting")
	fs.BoolVar(&o.includeRejected, "include-rejected", false, "include rejected keys when accepting")
	fs.BoolVar(&o.includeDenied, "include-denied", false, "include denied keys when accepting/rejecting")
	fs.StringVarP(&o.print, "print", "p", "", "print the matching public keys")
	fs.BoolVarP(&o.printAll, "print-all", "P", false, "print all public keys")
	fs.StringVarP(&o.delete, "delete", "d", "", "delete the matching keys (globs)")
	fs.BoolVarP(&o.deleteAll, "delete-all", "D", false, "delete all keys")
	fs.StringVarP(&o.finger, "finger", "f", "", "print the matching keys' fingerprints")
	fs.BoolVarP(&o.fingerAll, "finger-all", "F", false, "print all keys' fingerprints")
	fs.BoolVarP(&o.quiet, "quiet", "q", false, "suppress output")
	fs.BoolVarP(&o.yes, "yes", "y", false, `answer "Yes" to all questions`)
	fs.StringVar(&o.rotateAESKey, "rotate-aes-key", "True", "rotate the master AES key when keys are deleted or rejected")
	fs.StringVar(&o.preserveMinions, "preserve-minions", "False", "keep the caches of deleted minions")
	fs.StringVar(&o.genKeys, "gen-keys", "", "generate a key pair with this name")
	fs.StringVar(&o.genKeysDir, "gen-keys-dir", ".", "directory for --gen-keys")
	fs.BoolVar(&o.genSignature, "gen-signature", false, "sign master.pub with the master_sign key into master_pubkey_signature")
	fs.StringVar(&o.priv, "priv", "", "private key to sign with (--gen-signature)")
	fs.StringVar(&o.pub, "pub", "", "public key to sign (--gen-signature)")
	fs.StringVar(&o.signaturePath, "signature-path", "", "directory for the signature file (--gen-signature)")
	fs.BoolVar(&o.autoCreate, "auto-create", false, "create the master_sign key pair when missing (--gen-signature)")
	fs.IntVar(&o.keySize, "keysize", crypt.DefaultKeySize, "key size for --gen-keys (2048 to 32768)")
	fs.StringVarP(&o.configDir, "config-dir", "c", config.DefaultDir, "directory holding the master configuration")
	fs.StringVar(&o.out, "out", "", "outputter (json, yaml, nested, txt, raw, key)")
	fs.StringVar(&o.out, "output", "", "alias of --out")
	fs.IntVar(&o.outIndent, "out-indent", 4, "indentation of json and yaml output")
	fs.BoolVar(&o.noColor, "no-color", false, "disable colors")
	fs.BoolVar(&o.forceColor, "force-color", false, "force colors")
	fs.StringVar(&o.logLevel, "log-level", "", "console log level")
	fs.StringVarP(&o.user, "user", "u", "", "user to run salt-key as (accepted, not applied)")
	return fs
}

// usageError prints an optparse-style error and returns exit code 2.
func usageError(stderr io.Writer, msg string) int {
	fmt.Fprintf(stderr, "Usage: salt-key [options]\n\nsalt-key: error: %s\n", msg)
	return 2
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var o options
	fs := newFlagSet(&o, stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		return 2
	}
	if o.list != "" && !hasAnyPrefix(o.list, "acc", "pre", "un", "rej", "den", "all") {
		return usageError(stderr, fmt.Sprintf("'%s' is not a valid argument to '--list'", o.list))
	}
	if o.keySize < 2048 {
		return usageError(stderr, "The minimum value for keysize is 2048")
	}
	if o.keySize > 32768 {
		return usageError(stderr, "The maximum value for keysize is 32768")
	}
	if o.deleteAll && fs.NArg() > 0 {
		fmt.Fprintln(stderr, "Error: Delete all takes no arguments. Use -d to delete specified keys")
		return 1
	}
	log, err := logging.New(stderr, o.logLevel)
	if err != nil {
		return usageError(stderr, err.Error())
	}
	cfg, err := config.LoadMaster(o.configDir, log)
	if err != nil && o.genKeys == "" {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if cfg == nil {
		cfg = config.DefaultMaster(o.configDir)
	}
	c := newCLI(ctx, &o, cfg, stdin, stdout, stderr)
	return c.run()
}

func hasAnyPrefix(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// useColor follows salt/output get_printout: --force-color, else off for
// --no-color, color: False or a non-terminal stdout.
func useColor(o *options, cfgColor bool, stdout io.Writer) bool {
	if o.forceColor {
		return true
	}
	if o.noColor || !cfgColor {
		return false
	}
	f, ok := stdout.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// outputOptions are the outputter settings for --out.
func outputOptions(o *options, color bool) output.Options {
	return output.Options{Color: color, Indent: output.IndentOf(o.outIndent)}
}
