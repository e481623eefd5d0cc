//go:build !unix

package e2e

import "os/exec"

// detach is a no-op where processes have no controlling terminal.
func detach(*exec.Cmd) {}
