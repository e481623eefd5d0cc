package sandbox

import (
	"time"
)

// budgetKey is the scope entry that carries a render's budget to Herald's
// tags. No template can name it: Liquid identifiers cannot hold a NUL.
const budgetKey = "\x00budget"

// budget is what one render has left. The first limit exceeded is kept in
// err, and every later check returns it, so a render stops at once and
// reports the limit rather than whatever failed on the way out.
//
// The time budget is CPU time of the render's thread where the OS has such
// a clock (a loaded machine does not fail templates that are merely waiting
// for a CPU), capped at WallFactor times as much wall time; else wall time. The wall clock is read at every check, the
// thread's CPU clock (a system call) only once the wall time has run past
// the earliest moment the CPU budget could be spent.
type budget struct {
	l        *Limits
	deadline time.Time     // no CPU budget can be spent before this
	wallEnd  time.Time     // the wall-time cap: WallFactor × Timeout
	cpu      bool          // the thread clock works
	cpuStart time.Duration // thread CPU time at the start
	iters    int
	work     int
	total    int
	err      *Error
}

func (b *budget) reset(l *Limits, now time.Time) {
	*b = budget{l: l, deadline: now.Add(l.Timeout), wallEnd: now.Add(WallFactor * l.Timeout)}
	b.cpuStart, b.cpu = threadClock{}.now()
}

func (b *budget) fail(e *Error) *Error {
	if b.err == nil {
		b.err = e
	}
	return b.err
}

// check fails once the time is up.
func (b *budget) check() error {
	if b.err != nil {
		return b.err
	}
	now := time.Now()
	if !now.After(b.deadline) {
		return nil
	}
	if b.cpu && now.Before(b.wallEnd) {
		if t, ok := (threadClock{}).now(); ok {
			if left := b.l.Timeout - (t - b.cpuStart); left > 0 {
				b.deadline = now.Add(left)
				if b.deadline.After(b.wallEnd) {
					b.deadline = b.wallEnd
				}
				return nil
			}
		}
	}
	if now.After(b.wallEnd) {
		return b.fail(newError(ReasonTimeout, "the template ran longer than %s", WallFactor*b.l.Timeout))
	}
	return b.fail(newError(ReasonTimeout, "the template ran longer than its time budget of %s", b.l.Timeout))
}

// WallFactor caps a render's wall time at this many times its CPU budget:
// a render starved of CPU on a loaded machine still ends.
const WallFactor = 10

// tick counts one loop iteration or filter call.
func (b *budget) tick() error {
	b.iters++
	if b.iters > b.l.MaxIterations {
		return b.fail(newError(ReasonIterations, "the template ran more than %d loop iterations and filter calls", b.l.MaxIterations))
	}
	return b.check()
}

// made counts n bytes made by a filter or a capture.
func (b *budget) made(n int) error {
	if n > b.l.MaxValue {
		return b.fail(newError(ReasonValue, "the template made a value larger than %d bytes", b.l.MaxValue))
	}
	b.work += n
	if b.work > b.l.MaxWork {
		return b.fail(newError(ReasonWork, "the template's filters made more than %d bytes in all", b.l.MaxWork))
	}
	return nil
}

// wouldMake fails before a filter makes a value of n bytes.
func (b *budget) wouldMake(n int) error {
	if n > b.l.MaxValue || n < 0 {
		return b.fail(newError(ReasonValue, "the template would make a value larger than %d bytes", b.l.MaxValue))
	}
	return nil
}

// Tick counts one loop iteration or filter call (liquid.Budget).
func (b *budget) Tick() error { return b.tick() }

// Made counts n bytes a filter or capture made (liquid.Budget).
func (b *budget) Made(n int) error { return b.made(n) }

// WouldMake fails before a filter makes n bytes (liquid.Budget).
func (b *budget) WouldMake(n int) error { return b.wouldMake(n) }
