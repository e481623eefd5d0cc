//go:build !linux && !darwin

package sandbox

import "time"

// threadClock is absent where the OS has no per-thread CPU clock: the time
// budget is then wall time.
type threadClock struct{}

func (threadClock) lock()                      {}
func (threadClock) unlock()                    {}
func (threadClock) now() (time.Duration, bool) { return 0, false }
