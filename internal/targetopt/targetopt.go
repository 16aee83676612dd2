// Package targetopt holds the target options that salt, salt-cp and
// salt-ssh share: one flag per tgt_type, as Salt's TargetOptionsMixIn and
// ExtendedTargetOptionsMixIn declare them (salt/utils/parsers.py), the
// tgt_type the command line chose, and the -L list split as Salt's CLI
// splits it.
package targetopt

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"
)

// Kind is one target option: its tgt_type and its flag.
type Kind struct {
	Type, Long, Short, Usage string
}

// The target options, in Salt's order.
var (
	PCRE       = Kind{"pcre", "pcre", "E", "target minions by a regular expression on their ids"}
	List       = Kind{"list", "list", "L", "target a comma- or space-separated list of minion ids"}
	Grain      = Kind{"grain", "grain", "G", "target by grain value (key:value)"}
	GrainPCRE  = Kind{"grain_pcre", "grain-pcre", "P", "target by grain value with a regular expression"}
	Nodegroup  = Kind{"nodegroup", "nodegroup", "N", "target a nodegroup from the master config"}
	Range      = Kind{"range", "range", "R", "target with range expressions (not supported)"}
	Pillar     = Kind{"pillar", "pillar", "I", "target by pillar value"}
	PillarPCRE = Kind{"pillar_pcre", "pillar-pcre", "J", "target by pillar value with a regular expression"}
	IPCIDR     = Kind{"ipcidr", "ipcidr", "S", "target by IP address or network"}
	Compound   = Kind{"compound", "compound", "C", "target with a compound expression"}
)

// Basic is TargetOptionsMixIn's set without range (salt-cp's); Extended
// adds ExtendedTargetOptionsMixIn's (salt's).
var (
	Basic    = []Kind{PCRE, List, Grain, GrainPCRE, Nodegroup}
	Extended = []Kind{PCRE, List, Grain, GrainPCRE, Nodegroup, Pillar, PillarPCRE, IPCIDR, Compound}
)

// Options are the registered target flags of one command line.
type Options struct {
	kinds []Kind
	set   []bool
}

// Register adds the kinds' flags to fs. usage, when given, replaces a
// kind's help text by its tgt_type.
func Register(fs *pflag.FlagSet, kinds []Kind, usage map[string]string) *Options {
	o := &Options{kinds: kinds, set: make([]bool, len(kinds))}
	for i, k := range kinds {
		u := k.Usage
		if s, ok := usage[k.Type]; ok {
			u = s
		}
		fs.BoolVarP(&o.set[i], k.Long, k.Short, false, u)
	}
	return o
}

// Type is the tgt_type chosen, "glob" when none was. More than one is
// the usage error Salt gives (TargetOptionsMixIn._mixin_after_parsed).
func (o *Options) Type() (string, error) {
	var chosen []string
	kind := "glob"
	for i, k := range o.kinds {
		if o.set[i] {
			chosen = append(chosen, "--"+k.Long)
			kind = k.Type
		}
	}
	if len(chosen) > 1 {
		//lint:ignore ST1005 Salt's exact message
		return "", fmt.Errorf("The options %s are mutually exclusive. Please only choose one of them", strings.Join(chosen, "/"))
	}
	return kind, nil
}

// Target is the tgt sent for arg: with -L a list, split on commas (spaces
// dropped) when there is one, else on whitespace, as salt/utils/parsers.py
// (SaltCMDOptionParser._mixin_after_parsed) splits it; otherwise arg.
func Target(arg, tgtType string) any {
	if tgtType != List.Type {
		return arg
	}
	var parts []string
	if strings.Contains(arg, ",") {
		parts = strings.Split(strings.ReplaceAll(arg, " ", ""), ",")
	} else {
		parts = strings.Fields(arg)
	}
	out := make([]any, len(parts))
	for i, p := range parts {
		out[i] = p
	}
	return out
}
