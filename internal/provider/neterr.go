package provider

import (
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
	var ne net.Error
	var oe *net.OpError
	return errors.As(err, &ne) || errors.As(err, &oe) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET)
}
