package target

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors, matched with errors.Is.
var (
	// ErrUnsupported marks a target form Brine does not implement, such as
	// the range matcher (R@) or the data matcher.
	ErrUnsupported = errors.New("unsupported target")
	// ErrUnknownNodegroup is a reference to a nodegroup that is not
	// defined in the master's nodegroups.
	ErrUnknownNodegroup = errors.New("unknown nodegroup")
	// ErrNodegroupLoop is a nodegroup that refers to itself, directly or
	// through others.
	ErrNodegroupLoop = errors.New("nodegroup loop")
	// ErrUnsupportedRegex marks valid Python regular expression syntax
	// that Go's RE2 engine cannot run (lookaround, backreferences, ...).
	// It wraps ErrUnsupported.
	ErrUnsupportedRegex = fmt.Errorf("%w: regular expression syntax", ErrUnsupported)
)

// unsupportedSyntax is a Python regex construct RE2 lacks.
type unsupportedSyntax string

func (u unsupportedSyntax) Error() string {
	return string(u) + " is not supported by Go's RE2 engine"
}

func (u unsupportedSyntax) Is(target error) bool {
	return target == ErrUnsupportedRegex || target == ErrUnsupported
}

// SyntaxError is a malformed compound expression. Salt logs most such
// expressions and matches nothing (salt/matchers/compound_match.py);
// Brine rejects them when compiling. CompoundValue and CompoundMinions
// give Salt's exact answers instead. Pos is the byte offset of Token in Expr (for
// a list expression, in its words joined by single spaces). For a word
// that came from a nodegroup, Token is that word, Pos is the offset of the
// N@ reference, and Msg names the nodegroup.
type SyntaxError struct {
	Expr  string
	Pos   int
	Token string
	Msg   string
	// Err is the underlying cause, if any: a *PatternError, a
	// *NodegroupError or ErrUnsupported.
	Err error
}

// Error reads `compound target "…": "tok" at position N: message`.
func (e *SyntaxError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "compound target %q: ", e.Expr)
	if e.Token != "" {
		fmt.Fprintf(&b, "%q at position %d: ", e.Token, e.Pos)
	} else {
		fmt.Fprintf(&b, "at position %d: ", e.Pos)
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Unwrap returns the cause.
func (e *SyntaxError) Unwrap() error { return e.Err }

// PatternError is a pattern its matcher cannot compile: a regular
// expression Go's RE2 cannot express or Python would reject, a bad
// IP/CIDR, a grain or pillar target without its delimiter.
type PatternError struct {
	Kind    Kind
	Pattern string
	Msg     string
	Err     error
}

// Error names the kind, the pattern and the problem.
func (e *PatternError) Error() string {
	s := fmt.Sprintf("%s target %q: %s", e.Kind, e.Pattern, e.Msg)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the cause.
func (e *PatternError) Unwrap() error { return e.Err }

// NodegroupError is a nodegroup that cannot be expanded. Chain lists the
// nodegroups being expanded, outermost first, ending with Name.
type NodegroupError struct {
	Name  string
	Chain []string
	Msg   string
	Err   error // ErrUnknownNodegroup, ErrNodegroupLoop or nil
}

// Error names the nodegroup and, for nested ones, the chain of references.
func (e *NodegroupError) Error() string {
	s := fmt.Sprintf("nodegroup %q", e.Name)
	if len(e.Chain) > 1 {
		s += " (via " + strings.Join(e.Chain, " -> ") + ")"
	}
	return s + ": " + e.Msg
}

// Unwrap returns the sentinel cause.
func (e *NodegroupError) Unwrap() error { return e.Err }
