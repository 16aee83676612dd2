// Package winsession tells, on Windows, how the minion process runs:
// as a service in Session 0 (service mode) or in a user's logon session
// (session mode), and whether a program is a GUI one. Session 0
// isolation keeps a service's windows off every user's desktop, so GUI
// jobs need session mode (docs/WINDOWS.md). The package is empty on
// other systems.
package winsession
