package master

import "os"

// LocalUser is the user a command-line client publishes as
// (salt.utils.user.get_specific_user): sudo_<name> under sudo, else
// root or $USER.
func LocalUser() string {
	if u := os.Getenv("SUDO_USER"); u != "" {
		return "sudo_" + u
	}
	if os.Geteuid() == 0 {
		return "root"
	}
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return "root"
}
