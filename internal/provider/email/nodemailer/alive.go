//go:build linux || darwin || freebsd || netbsd || openbsd

package nodemailer

import (
	"net"
	"syscall"
)

// alive reports whether an idle connection can still carry a transaction:
// the server has neither closed it nor spoken since its last reply (as it
// does when it drops an idle client with "421 4.4.2 timeout"). One
// non-blocking peek at the socket, so a dead connection is skipped before a
// command is wasted on it.
func alive(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return true
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return true
	}
	live := true
	var b [1]byte
	err = rc.Read(func(fd uintptr) bool {
		_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		live = err == syscall.EAGAIN || err == syscall.EWOULDBLOCK
		return true
	})
	return err == nil && live
}
