package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/brinesalt/brine/internal/config"
	"github.com/brinesalt/brine/internal/crypt"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/pki"
	"github.com/brinesalt/brine/output"
)

// cli is KeyCLI: one salt-key invocation.
type cli struct {
	ctx            context.Context
	o              *options
	cfg            *config.Master
	stdin          *bufio.Reader
	stdout, stderr io.Writer
	keys           *pki.Master
	hashType       string
	color          bool

	// fun is the command (list, print, accept, reject, delete, finger,
	// gen_keys); match its glob; includes as KeyCLI._update_opts sets them.
	fun                                    string
	match                                  string
	inclAccepted, inclRejected, inclDenied bool
}

func newCLI(ctx context.Context, o *options, cfg *config.Master, stdin io.Reader, stdout, stderr io.Writer) *cli {
	c := &cli{ctx: ctx, o: o, cfg: cfg, stdin: bufio.NewReader(stdin), stdout: stdout, stderr: stderr,
		hashType: crypt.DefaultHashType}
	if s, ok := cfg.Raw.Value("hash_type").(string); ok && s != "" {
		c.hashType = s
	}
	cfgColor := true
	if b, ok := cfg.Raw.Value("color").(bool); ok {
		cfgColor = b
	}
	c.color = useColor(o, cfgColor, stdout)
	c.keys = pki.NewMaster(cfg.PKIDir)
	c.keys.CacheDir = cfg.CacheDir
	c.keys.RotateAESKey = !strings.EqualFold(o.rotateAESKey, "false")
	if b, ok := cfg.Raw.Value("rotate_aes_key").(bool); ok && !b {
		c.keys.RotateAESKey = false
	}
	c.keys.PreserveMinions = strings.EqualFold(o.preserveMinions, "true")
	if b, ok := cfg.Raw.Value("preserve_minion_cache").(bool); ok {
		c.keys.PreserveMinionCache = b
	}
	c.updateOpts()
	return c
}

// updateOpts is KeyCLI._update_opts: the first command given wins, in
// Salt's order, and list_all is the default.
func (c *cli) updateOpts() {
	o := c.o
	type cmd struct {
		name string
		set  bool
		arg  string
	}
	cmds := []cmd{
		{"gen_keys", o.genKeys != "", o.genKeys},
		{"gen_signature", o.genSignature, ""},
		{"list", o.list != "", o.list}, {"list_all", o.listAll, ""},
		{"print", o.print != "", o.print}, {"print_all", o.printAll, ""},
		{"accept", o.accept != "", o.accept}, {"accept_all", o.acceptAll, ""},
		{"reject", o.reject != "", o.reject}, {"reject_all", o.rejectAll, ""},
		{"delete", o.delete != "", o.delete}, {"delete_all", o.deleteAll, ""},
		{"finger", o.finger != "", o.finger}, {"finger_all", o.fingerAll, ""},
	}
	chosen := cmd{name: "list_all"}
	for _, cm := range cmds {
		if cm.set {
			chosen = cm
			break
		}
	}
	c.inclAccepted, c.inclRejected, c.inclDenied = o.includeAccepted, o.includeRejected, o.includeDenied
	switch {
	case strings.HasPrefix(chosen.name, "gen_"):
	case chosen.name == "list_all":
		c.match = "all"
	case strings.HasSuffix(chosen.name, "_all"):
		c.match = "*"
	default:
		c.match = chosen.arg
	}
	switch {
	case strings.HasPrefix(chosen.name, "accept"):
		c.inclRejected = o.includeAll || o.includeRejected
		c.inclAccepted = false
	case strings.HasPrefix(chosen.name, "reject"):
		c.inclAccepted = o.includeAll || o.includeAccepted
		c.inclRejected = false
	}
	c.fun = strings.TrimSuffix(chosen.name, "_all")
}

func (c *cli) run() int {
	var err error
	switch c.fun {
	case "gen_keys":
		err = c.genKeys()
	case "gen_signature":
		err = c.genSignature()
	case "list":
		err = c.list()
	case "print":
		err = c.printKeys()
	case "finger":
		err = c.fingers()
	default:
		return c.change()
	}
	if err != nil {
		fmt.Fprintln(c.stderr, err)
		return 1
	}
	return 0
}

// display is salt.output.display_output(data, "key"): --out wins; the key
// outputter falls back to nested for data it cannot show, as Salt's
// try_printout does on its KeyError.
func (c *cli) display(data *ordered.Map) error {
	opts := outputOptions(c.o, c.color)
	if c.o.out != "" {
		return output.Write(c.stdout, c.o.out, data, opts)
	}
	if s, ok := keyOutput(data, c.color); ok {
		if s = strings.TrimRight(s, " \t\r\n"); s != "" {
			_, err := io.WriteString(c.stdout, s+"\n")
			return err
		}
		return nil
	}
	return output.Write(c.stdout, "nested", data, opts)
}

func (c *cli) list() error {
	l, err := c.keys.ListStatus(c.match)
	if err != nil {
		return err
	}
	data := l.Map()
	data.Delete(pki.Local)
	return c.display(data)
}

func (c *cli) printKeys() error {
	data, err := c.keys.KeyStr(c.match)
	if err != nil {
		return err
	}
	return c.display(data)
}

func (c *cli) fingers() error {
	data, err := c.keys.Finger(c.match, c.hashType)
	if err != nil {
		return err
	}
	return c.display(data)
}

// genKeys is Key.gen_keys through the CLI: write <dir>/<name>.pem/.pub
// (keeping an existing pair; encrypted with signing_key_pass when that
// is set, as Salt's Key passes its passphrase) and show the public key's
// fingerprint.
func (c *cli) genKeys() error {
	dir := c.o.genKeysDir
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("gen keys: %w", err)
	}
	pass, err := c.signingKeyPass()
	if err != nil {
		return err
	}
	if _, err := crypt.GenKeysPass(dir, c.o.genKeys, c.o.keySize, pass); err != nil {
		return err
	}
	f, err := crypt.PemFinger(filepath.Join(dir, c.o.genKeys+".pub"), crypt.DefaultHashType)
	if err != nil {
		return err
	}
	return c.display(ordered.FromPairs("return", f))
}

// signingKeyPass is signing_key_pass, the passphrase Salt's Key gives
// gen_keys and gen_signature.
func (c *cli) signingKeyPass() (string, error) {
	return crypt.KeyPass("signing_key_pass", c.cfg.Raw.Value("signing_key_pass"))
}

// genSignature is Key.gen_keys_signature: find (or, with --auto-create,
// make) the signing key, then sign the master public key into
// <signature-path>/master_pubkey_signature. Problems Salt reports as the
// return value are shown the same way.
func (c *cli) genSignature() error {
	ret, err := c.signature()
	if err != nil {
		return err
	}
	return c.display(ordered.FromPairs("return", ret))
}

func (c *cli) signature() (any, error) {
	pkiDir := c.cfg.PKIDir
	pass, err := c.signingKeyPass()
	if err != nil {
		return nil, err
	}
	isFile := func(p string) bool { st, err := os.Stat(p); return err == nil && st.Mode().IsRegular() }
	pub, priv := c.o.pub, c.o.priv
	if pub != "" && !isFile(pub) {
		return "Public-key " + pub + " does not exist", nil
	}
	if pub == "" && isFile(filepath.Join(pkiDir, "master.pub")) {
		pub = filepath.Join(pkiDir, "master.pub")
	}
	if priv != "" && !isFile(priv) {
		return "Private-key " + priv + " does not exist", nil
	}
	signName, _ := c.cfg.Raw.Value("master_sign_key_name").(string)
	if signName == "" {
		signName = crypt.MasterSignKeyName
	}
	sigName, _ := c.cfg.Raw.Value("master_pubkey_signature").(string)
	if sigName == "" {
		sigName = crypt.MasterPubkeySignature
	}
	if priv == "" && isFile(filepath.Join(pkiDir, signName+".pem")) {
		priv = filepath.Join(pkiDir, signName+".pem")
	}
	if priv == "" {
		if !c.o.autoCreate {
			return "No usable private-key found", nil
		}
		p, err := crypt.GenKeysPass(pkiDir, signName, c.o.keySize, pass)
		if err != nil {
			return nil, err
		}
		priv = p
	}
	if pub == "" {
		return "No usable public-key found", nil
	}
	dir := c.o.signaturePath
	if dir == "" {
		dir = pkiDir
	}
	return crypt.GenSignature(priv, pub, filepath.Join(dir, sigName), pass)
}

// filterRet is KeyCLI._filter_ret.
func (c *cli) filterRet(l pki.Listing) pki.Listing {
	if c.fun == "delete" {
		return l
	}
	out := pki.Listing{}
	if l.Has(pki.Pending) {
		out = append(out, pki.Group{State: pki.Pending, Keys: l.Get(pki.Pending)})
	}
	for _, s := range []struct {
		state string
		on    bool
	}{{pki.Accepted, c.inclAccepted}, {pki.Rejected, c.inclRejected}, {pki.Denied, c.inclDenied}} {
		if s.on && len(l.Get(s.state)) > 0 {
			out = append(out, pki.Group{State: s.state, Keys: l.Get(s.state)})
		}
	}
	return out
}

// noMatch is KeyCLI._print_no_match.
func (c *cli) noMatch() string {
	statuses := []string{"unaccepted"}
	if c.inclAccepted {
		statuses = append(statuses, "accepted")
	}
	if c.inclRejected {
		statuses = append(statuses, "rejected")
	}
	if c.inclDenied {
		statuses = append(statuses, "denied")
	}
	s := statuses[0]
	if len(statuses) > 1 {
		s = strings.Join(statuses[:len(statuses)-1], ", ") + " or " + statuses[len(statuses)-1]
	}
	return fmt.Sprintf("The key glob '%s' does not match any %s keys.", c.match, s)
}

// verb is cmd.rstrip("e") + "ed": accepted, rejected, deleted.
func (c *cli) verb() string { return strings.TrimRight(c.fun, "e") + "ed" }

// change runs accept, reject or delete: show the matching keys, ask,
// act, and report each key.
func (c *cli) change() int {
	matched := c.filterRet(c.keys.NameMatch(c.match, false))
	if len(matched) == 0 {
		fmt.Fprintln(c.stdout, c.noMatch())
		return 0
	}
	fmt.Fprintf(c.stdout, "The following keys are going to be %s:\n", c.verb())
	if err := c.display(matched.Map()); err != nil {
		fmt.Fprintln(c.stderr, err)
		return 1
	}
	if !c.o.yes {
		ok, err := c.confirm()
		if err != nil {
			fmt.Fprintln(c.stdout)
			fmt.Fprintln(c.stderr, err)
			return 1
		}
		if !ok {
			return 0
		}
	}
	var res pki.Listing
	switch c.fun {
	case "accept":
		var errs []error
		res, errs = c.keys.Accept(matched, c.inclRejected, c.inclDenied)
		for _, e := range errs {
			fmt.Fprintln(c.stderr, e)
		}
	case "reject":
		res = c.keys.Reject(matched, c.inclAccepted, c.inclDenied)
	case "delete":
		c.keys.Delete(matched)
		res = matched
	}
	for _, g := range res {
		for _, id := range g.Keys {
			fmt.Fprintf(c.stdout, "Key for minion %s %s.\n", id, c.verb())
		}
	}
	return 0
}

// errNoAnswer is end of input at the prompt, where Salt's input() fails.
var errNoAnswer = errors.New("no answer on standard input; nothing changed")

// confirm asks "Proceed?" with Salt's defaults: yes for accept and
// reject, no for delete.
func (c *cli) confirm() (bool, error) {
	prompt, def := "Proceed? [n/Y] ", "y"
	if c.fun == "delete" {
		prompt, def = "Proceed? [N/y] ", "n"
	}
	fmt.Fprint(c.stdout, prompt)
	line, err := c.stdin.ReadString('\n')
	if err != nil && line == "" {
		return false, errNoAnswer
	}
	if err := c.ctx.Err(); err != nil {
		//lint:ignore ST1005 Salt's exact message
		return false, fmt.Errorf("Exiting on CTRL-c: %w", err)
	}
	ans := strings.TrimRight(line, "\r\n")
	if ans == "" {
		ans = def
	}
	return strings.HasPrefix(strings.ToLower(ans), "y"), nil
}
