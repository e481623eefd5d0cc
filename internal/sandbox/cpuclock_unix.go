//go:build linux || darwin

package sandbox

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// threadClock reads the CPU time of the calling OS thread. A render locks
// its goroutine to its thread, so the thread's clock is the render's: time
// spent waiting for a CPU on a loaded machine does not count against it.
type threadClock struct{}

func (threadClock) lock()   { runtime.LockOSThread() }
func (threadClock) unlock() { runtime.UnlockOSThread() }

func (threadClock) now() (time.Duration, bool) {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
