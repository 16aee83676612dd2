// Package returners is Salt's minion-side returners (salt/returners):
// after a job the minion hands its return to each returner named in the
// publication's "ret" (salt --return) and in the minion's own "return"
// option, as salt/minion.py _thread_return does. Returners register
// themselves under Salt's names in a Registry; each reads its settings
// with Options, Salt's get_returner_options (ret_config and ret_kwargs
// included).
package returners
