//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package nodemailer

import "net"

// alive cannot peek at a socket here; a dead connection is found by its
// first reply instead (see Send).
func alive(net.Conn) bool { return true }
