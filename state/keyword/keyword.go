// Package keyword holds Salt's state keyword tables (salt/state.py
// STATE_REQUISITE_KEYWORDS, STATE_REQUISITE_IN_KEYWORDS and
// STATE_RUNTIME_KEYWORDS), which the compiler, the runner and the state
// modules all consult. It imports nothing.
package keyword

// Requisite keywords, from salt/state.py STATE_REQUISITE_KEYWORDS.
var requisiteKeywords = []string{
	"onchanges", "onchanges_any", "onfail", "onfail_any", "onfail_all",
	"onfail_stop", "prereq", "prerequired", "watch", "watch_any", "require",
	"require_any", "listen",
}

// RequisiteInKeywords are the *_in forms (STATE_REQUISITE_IN_KEYWORDS).
var requisiteInKeywords = []string{
	"onchanges_in", "onfail_in", "prereq_in", "watch_in", "require_in", "listen_in",
}

// runtimeKeywords are consumed by the state system (STATE_RUNTIME_KEYWORDS).
var runtimeKeywords = []string{
	"fun", "state", "check_cmd", "cmd_opts_exclude", "failhard", "onlyif",
	"unless", "creates", "retry", "order", "parallel", "prereq", "prereq_in",
	"prerequired", "reload_modules", "reload_grains", "reload_pillar", "runas",
	"runas_password", "fire_event", "saltenv", "umask", "use", "use_in",
	"__env__", "__sls__", "__id__", "__orchestration_jid__", "__pub_user",
	"__pub_arg", "__pub_jid", "__pub_fun", "__pub_tgt", "__pub_ret",
	"__pub_pid", "__pub_tgt_type", "__prereq__", "__prerequired__", "__umask__",
}

var (
	internalSet  = map[string]bool{}
	requisiteSet = map[string]bool{}
)

func init() {
	for _, l := range [][]string{requisiteKeywords, requisiteInKeywords, runtimeKeywords} {
		for _, k := range l {
			internalSet[k] = true
		}
	}
	for _, k := range requisiteKeywords {
		requisiteSet[k] = true
	}
}

// Internal reports whether key is one of Salt's internal keywords, which
// are never passed to a state function (STATE_INTERNAL_KEYWORDS).
func Internal(key string) bool { return internalSet[key] }

// IsRequisite reports whether key is a requisite keyword
// (STATE_REQUISITE_KEYWORDS).
func IsRequisite(key string) bool { return requisiteSet[key] }

// RequisiteKeywords lists the requisite keywords and their _in forms
// (STATE_REQUISITE_KEYWORDS and STATE_REQUISITE_IN_KEYWORDS).
func RequisiteKeywords() []string {
	return append(append([]string(nil), requisiteKeywords...), requisiteInKeywords...)
}
