package provider

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"syscall"

	"github.com/herald-notify/herald/internal/netguard"
)

// isNetError reports whether err is a failure to reach or hear from the
// provider (worth retrying), as opposed to a refusal by Herald's guard.
func isNetError(err error) bool {
	if errors.Is(err, netguard.ErrRefused) {
		return false
	}
	// A certificate the client does not trust will not be trusted on retry.
	var unknown x509.UnknownAuthorityError
	var invalid x509.CertificateInvalidError
	var host x509.HostnameError
	var verify *tls.CertificateVerificationError
	if errors.As(err, &unknown) || errors.As(err, &invalid) || errors.As(err, &host) || errors.As(err, &verify) {
		return false
	}
	var ne net.Error
	var oe *net.OpError
	return errors.As(err, &ne) || errors.As(err, &oe) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET)
}
