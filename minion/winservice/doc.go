// Package winservice runs the Windows minion in either of its two modes
// (docs/WINDOWS.md):
//
//   - service mode, the default: salt-minion.exe install registers the
//     salt-minion service (automatic start, restart on failure, running as
//     LocalSystem in Session 0); the Service Control Manager starts it and
//     the process speaks the SCM protocol (golang.org/x/sys/windows/svc),
//     stopping cleanly on Stop and Shutdown.
//   - session mode, for jobs that drive GUI programs: salt-minion.exe
//     session install disables the service and registers the minion in
//     the user's Run key (HKCU\Software\Microsoft\Windows\CurrentVersion\Run),
//     so it starts at that user's logon inside the desktop session, where
//     the windows of programs it starts are seen.
//
// The package is empty on other systems.
package winservice
