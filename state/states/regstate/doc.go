// Package regstate is Salt's reg state module (salt/states/reg.py):
// reg.present, reg.absent and reg.key_absent over the reg execution
// module. It registers on Windows only. win_owner, win_perms,
// win_deny_perms, win_inheritance and win_perms_reset (salt.utils.win_dacl
// check_perms) are not supported yet: given, they fail the state with
// that reason rather than being ignored.
package regstate
