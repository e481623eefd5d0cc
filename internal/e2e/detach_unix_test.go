//go:build unix

package e2e

import (
	"os/exec"
	"syscall"
)

// detach starts cmd in a session of its own, without a controlling
// terminal: a first start's API keys go to the data directory, never to the
// terminal of whoever runs the tests.
func detach(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} }
