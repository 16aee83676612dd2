package testhosts

import (
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/crypto/ssh"
)

// hostCAPath is the cluster's host CA private key (in the work directory,
// removed with the cluster); its public half is next to it.
func (c *Cluster) hostCAPath() string { return filepath.Join(c.st.WorkDir, "host_ca") }

// hostCertPath is where sshd finds host h's certificate.
func (h *hostState) hostCertPath() string { return h.hostKeyPath() + "-cert.pub" }

// makeHostCA creates the host CA when a host wants a certificate.
func (c *Cluster) makeHostCA() error {
	for _, h := range c.st.Hosts {
		if h.Options.HostCert {
			if _, err := newKey(c.hostCAPath(), "brine-testhosts-host-ca"); err != nil {
				return fmt.Errorf("host CA: %w", err)
			}
			return nil
		}
	}
	return nil
}

// HostCA returns the public key of the CA that signs the certificates of
// HostCert hosts, for a known_hosts line such as
// "@cert-authority 10.250.C.* <key>"; nil when no host has one.
func (c *Cluster) HostCA() ssh.PublicKey {
	k, err := loadPublicKey(c.hostCAPath() + ".pub")
	if err != nil {
		return nil
	}
	return k
}

// signHostKey writes host h's certificate for its current host key, valid
// for its IP and ID from an hour ago on, with no expiry.
func (c *Cluster) signHostKey(h *hostState) error {
	ca, err := loadKey(c.hostCAPath())
	if err != nil {
		return fmt.Errorf("host CA: %w", err)
	}
	pub, err := loadPublicKey(h.hostKeyPath() + ".pub")
	if err != nil {
		return err
	}
	cert := &ssh.Certificate{
		Key: pub, CertType: ssh.HostCert, KeyId: "brine-testhosts " + h.ID,
		ValidPrincipals: []string{h.IP, h.ID},
		ValidAfter:      uint64(time.Now().Add(-time.Hour).Unix()),
		ValidBefore:     ssh.CertTimeInfinity,
	}
	if err := cert.SignCert(rand.Reader, ca); err != nil {
		return fmt.Errorf("sign host key of %s: %w", h.ID, err)
	}
	return os.WriteFile(h.hostCertPath(), ssh.MarshalAuthorizedKey(cert), 0o644)
}
