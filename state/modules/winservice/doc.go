// Package winservice is Salt's win_service execution module
// (salt/modules/win_service.py, virtual name "service") over the
// Service Control Manager: listing, querying, starting, stopping,
// enabling and disabling services. It registers on Windows only.
//
// Not supported yet: service.create, service.delete, service.modify
// (beyond the start type enable/disable set) and service.getsid; they
// are not registered, so a call is Salt's "not available".
// service.restart of salt-minion itself runs Salt's restart command line
// (cmd /c ping -n 3 127.0.0.1 && net stop salt-minion && net start
// salt-minion) detached, instead of through a scheduled task.
package winservice
