package pki

import (
	"fmt"

	"golang.org/x/sys/windows"
)

// pkiDACL grants full control to SYSTEM and the Administrators group
// only, inherited by the files created below, with the parent's ACL
// blocked (P): what Salt's Windows installer sets on the pki directory,
// so no other user reads minion.pem.
const pkiDACL = "D:P(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)"

// restrictDir replaces dir's DACL with pkiDACL.
func restrictDir(dir string) error {
	sd, err := windows.SecurityDescriptorFromString(pkiDACL)
	if err != nil {
		return fmt.Errorf("pki acl: %w", err)
	}
	dacl, _, err := sd.DACL()
	if err != nil {
		return fmt.Errorf("pki acl: %w", err)
	}
	if err := windows.SetNamedSecurityInfo(dir, windows.SE_FILE_OBJECT,
		windows.DACL_SECURITY_INFORMATION|windows.PROTECTED_DACL_SECURITY_INFORMATION, nil, nil, dacl, nil); err != nil {
		return fmt.Errorf("restrict %s to SYSTEM and Administrators: %w", dir, err)
	}
	return nil
}
