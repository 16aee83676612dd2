// Package e2e holds the end-to-end test of the pkg, service, cmd and file
// states together: the seeds' db_setup.sls applied through state.apply
// with the real registries, local .deb packages and a SysV test service.
// It is a package of its own so that the unit tests of the state modules
// do not link every module.
package e2e
