// Package version holds the versions Brine reports.
//
// Salt's test.version, the saltversion grain and salt-ssh's thin checks
// all report salt.version.__version__. Brine reports the Salt release
// whose behaviour it reproduces, so that states and templates that test
// `grains['saltversioninfo']` keep working; the conformance cases in
// internal/testsupport/conformance/testdata/salt3006 were recorded against that release. Brine's own
// version is reported separately, in versions_report and `salt-thin version`.
package version

// Salt is the Salt release Brine emulates, as salt.version.__version__
// prints it.
const Salt = "3006.19"

// SaltInfo is Salt's __version_info__ for Salt: (major, minor), the
// shape of the saltversioninfo grain.
var SaltInfo = [2]int{3006, 19}

// Brine is this build's own version. Release builds override it with
// -ldflags '-X github.com/brinesalt/brine/internal/version.Brine=…'.
var Brine = "0.1.0-dev"

// ThinProtocol numbers the contract between salt-ssh's remote scripts
// and the thin binary's subcommands. salt-ssh refuses a thin binary built
// with another number (see ThinMarker) instead of failing on targets.
const ThinProtocol = 3

// ThinMarker is embedded in the thin binary so salt-ssh can read its
// protocol from the file without running it.
const ThinMarker = "\x00BRINE-THIN-PROTOCOL:3\x00"
