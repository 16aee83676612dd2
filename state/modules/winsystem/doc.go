// Package winsystem is the basics of Salt's win_system execution module
// (salt/modules/win_system.py, virtual name "system"): computer name,
// hostname, shutdown and reboot. It registers on Windows only.
//
// Not supported yet: only_on_pending_reboot (Salt's get_pending_reboot
// reads a dozen sources; the option is refused, not ignored), the domain
// and workgroup functions, system time and date, lock. set_hostname
// renames through SetComputerNameEx, as set_computer_name does, instead
// of WMI's Win32_ComputerSystem.Rename; both take effect at the next
// boot.
package winsystem
