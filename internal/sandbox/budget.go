package sandbox

import (
	"reflect"
	"time"

	"github.com/osteele/liquid/values"
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

// limitWriter collects output up to max bytes.
type limitWriter struct {
	b      *budget
	buf    []byte
	max    int
	reason string
	work   bool // counts toward the work budget (captures)
}

func (w *limitWriter) Write(p []byte) (int, error) {
	if err := w.b.check(); err != nil {
		return 0, err
	}
	if len(w.buf)+len(p) > w.max {
		if w.reason == ReasonOutput {
			return 0, w.b.fail(newError(ReasonOutput, "the rendered text is longer than %d bytes", w.max))
		}
		return 0, w.b.fail(newError(ReasonValue, "a capture is longer than %d bytes", w.max))
	}
	if w.work {
		if err := w.b.made(len(p)); err != nil {
			return 0, err
		}
	}
	w.buf = append(w.buf, p...)
	return len(p), nil
}

// WriteString avoids a copy for the writers that know it.
func (w *limitWriter) WriteString(s string) (int, error) { return w.Write([]byte(s)) }

// sizeOf estimates the bytes of a value, stopping once past limit.
func sizeOf(v any, limit int) int {
	n := 0
	var walk func(v any)
	walk = func(v any) {
		if n > limit {
			return
		}
		switch t := v.(type) {
		case nil, bool, int, int64, float64, float32, int32, uint, uint64:
			n += 8
		case string:
			n += 16 + len(t)
		case []byte:
			n += 16 + len(t)
		case []any:
			n += 16
			for _, x := range t {
				walk(x)
			}
		case []string:
			n += 16
			for _, x := range t {
				n += 16 + len(x)
			}
		case map[string]any:
			n += 16
			for k, x := range t {
				n += 16 + len(k)
				walk(x)
			}
		case values.Range:
			n += 8 * max(t.Len(), 0)
		case time.Time:
			n += 24
		default:
			rv := reflect.ValueOf(v)
			switch rv.Kind() {
			case reflect.Slice, reflect.Array:
				n += 16
				for i := 0; i < rv.Len() && n <= limit; i++ {
					walk(rv.Index(i).Interface())
				}
			case reflect.Map:
				n += 16
				it := rv.MapRange()
				for it.Next() && n <= limit {
					walk(it.Key().Interface())
					walk(it.Value().Interface())
				}
			case reflect.String:
				n += 16 + rv.Len()
			default:
				n += 16
			}
		}
	}
	walk(v)
	return n
}
