package dashboard

import (
	"strconv"
	"sync"
	"time"
)

// failureLimiter counts failed sign-ins per key (a client address, an
// e-mail address) in fixed windows: past max failures in a window, the key
// is refused until the window ends. Successes do not count.
type failureLimiter struct {
	max    int
	window time.Duration
	now    func() time.Time

	mu   sync.Mutex
	keys map[string]*failures
}

type failures struct {
	count int
	start time.Time
}

// maxTrackedKeys bounds the limiter's memory: past it, the windows that
// ended are forgotten at the next failure.
const maxTrackedKeys = 10_000

func newFailureLimiter(max int, window time.Duration, now func() time.Time) *failureLimiter {
	return &failureLimiter{max: max, window: window, now: now, keys: map[string]*failures{}}
}

// blocked reports whether any of keys is out of tries, and the seconds
// until it may try again.
func (l *failureLimiter) blocked(keys ...string) (bool, string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	for _, k := range keys {
		f := l.keys[k]
		if f != nil && now.Sub(f.start) < l.window && f.count >= l.max {
			wait := int((l.window - now.Sub(f.start) + time.Second - 1) / time.Second)
			return true, strconv.Itoa(max(wait, 1))
		}
	}
	return false, ""
}

// fail counts a failure against each of keys.
func (l *failureLimiter) fail(keys ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if len(l.keys) >= maxTrackedKeys {
		for k, f := range l.keys {
			if now.Sub(f.start) >= l.window {
				delete(l.keys, k)
			}
		}
	}
	for _, k := range keys {
		f := l.keys[k]
		if f == nil || now.Sub(f.start) >= l.window {
			f = &failures{start: now}
			l.keys[k] = f
		}
		f.count++
	}
}
