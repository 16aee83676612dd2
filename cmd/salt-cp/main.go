// Command salt-cp copies local files to minions through the local master
// (salt/cli/cp.py SaltCP). Without -C/--chunked each file travels whole
// in one cp.recv job; with it, files and whole directory trees go in
// chunks of salt_cp_chunk_size bytes (gzip-compressed unless -n), one
// cp.recv_chunked job per chunk. Brine's chunked copy is hash-checked:
// the minion stages the chunks beside the destination and renames the
// file into place only when its SHA-256 matches, so a destination never
// holds half a file.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/brinesalt/brine/internal/config"
	"github.com/brinesalt/brine/internal/logging"
	"github.com/brinesalt/brine/internal/shutdown"
	"github.com/brinesalt/brine/internal/targetopt"
	"github.com/brinesalt/brine/master"
)

func main() {
	ctx, stop := shutdown.Context(nil, "")
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// options are salt-cp's options (salt/utils/parsers.py
// SaltCPOptionParser). Its target options are TargetOptionsMixIn's, not
// salt's extended set: -C is --chunked here, and there is no compound,
// pillar or ipcidr matching, as in Salt.
type options struct {
	target                              *targetopt.Options
	tgtType                             string // target.Type() once parsed
	chunked, noCompression, relay       bool
	timeout                             int
	out, configDir, logLevel, delimiter string
	outIndent                           int
	noColor                             bool
}

func newFlagSet(o *options, stderr io.Writer) *pflag.FlagSet {
	fs := pflag.NewFlagSet("salt-cp", pflag.ContinueOnError)
	fs.SetInterspersed(true)
	fs.SetOutput(stderr)
	o.target = targetopt.Register(fs, targetopt.Basic, nil)
	fs.StringVar(&o.delimiter, "delimiter", "", "grain key delimiter")
	fs.BoolVarP(&o.chunked, "chunked", "C", false, "chunked transfer: big files, directories, hash-checked")
	fs.BoolVarP(&o.noCompression, "no-compression", "n", false, "do not gzip the chunks")
	fs.BoolVar(&o.relay, "relay", false, "Brine's own: minions pass the files on to each other in verified chunks, so the master's uplink carries each byte about once (salt_cp_relay; docs/RELAY.md)")
	fs.IntVarP(&o.timeout, "timeout", "t", 5, "seconds to wait for the minions' answers to each job")
	fs.StringVar(&o.out, "out", "", "outputter (nested, json, yaml, txt, raw, ...)")
	fs.StringVar(&o.out, "output", "", "alias of --out")
	fs.IntVar(&o.outIndent, "out-indent", -1000, "indent for json/yaml output")
	fs.BoolVar(&o.noColor, "no-color", false, "no colours")
	fs.StringVarP(&o.configDir, "config-dir", "c", config.DefaultDir, "configuration directory")
	fs.StringVarP(&o.logLevel, "log-level", "l", "warning", "console log level")
	return fs
}

// defaultChunkSize is the master's salt_cp_chunk_size default.
const defaultChunkSize = 98304

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var o options
	fs := newFlagSet(&o, stderr)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	rest := fs.Args()
	if len(rest) < 3 {
		fmt.Fprintln(stderr, "Usage: salt-cp [options] '<target>' SOURCE [SOURCE...] DEST")
		fmt.Fprintln(stderr, "salt-cp: error: Insufficient arguments")
		return 2
	}
	var err error
	if o.tgtType, err = o.target.Type(); err != nil {
		fmt.Fprintf(stderr, "salt-cp: error: %v\n", err)
		return 2
	}
	log, err := logging.New(stderr, o.logLevel)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	cfg, err := config.LoadMaster(o.configDir, nil)
	if err != nil {
		log.Error(err.Error())
		return 1
	}
	chunk, err := chunkSize(cfg)
	if err != nil {
		log.Error(err.Error())
		return 1
	}
	iface, relayPort, relayOn, err := relayOptions(cfg)
	if err != nil {
		log.Error(err.Error())
		return 1
	}
	o.relay = o.relay || relayOn
	mo, err := master.OptionsFromConfig(cfg)
	if err != nil {
		log.Error(err.Error())
		return 1
	}
	cp := &saltCP{o: o, stdout: stdout, stderr: stderr, log: log, chunkSize: chunk,
		tgt: targetopt.Target(rest[0], o.tgtType), dest: rest[len(rest)-1], sock: mo.LocalSocket(),
		timeout: time.Duration(o.timeout) * time.Second, relayIface: iface, relayPort: relayPort}
	for _, s := range rest[1 : len(rest)-1] {
		cp.src = append(cp.src, realPath(s))
	}
	return cp.run(ctx)
}

// chunkSize reads salt_cp_chunk_size from the master config.
func chunkSize(cfg *config.Master) (int, error) {
	v, ok := cfg.Raw.Get("salt_cp_chunk_size")
	if !ok || v == nil {
		return defaultChunkSize, nil
	}
	var n int
	switch x := v.(type) {
	case int:
		n = x
	case int64:
		n = int(x)
	case uint64:
		n = int(x)
	default:
		return 0, fmt.Errorf("config %s: salt_cp_chunk_size: %v is not an integer", cfg.File, v)
	}
	if n <= 0 {
		return 0, fmt.Errorf("config %s: salt_cp_chunk_size: %d is not positive", cfg.File, n)
	}
	return n, nil
}
