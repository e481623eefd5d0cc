package httpapi

import (
	"fmt"
	"math"
	"net/http"
	"sync"
	"time"
)

type bucket struct {
	mu     sync.Mutex
	tokens float64
	last   time.Time
}

// take spends one token if there is one; otherwise it says how long to wait.
func (b *bucket) take(rate, burst float64, now time.Time) (remaining int, wait time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.tokens = math.Min(burst, b.tokens+now.Sub(b.last).Seconds()*rate)
	b.last = now
	if b.tokens < 1 {
		return 0, time.Duration((1 - b.tokens) / rate * float64(time.Second))
	}
	b.tokens--
	return int(b.tokens), 0
}

type syncMap struct {
	mu sync.Mutex
	m  map[string]*bucket
}

func (s *syncMap) get(key string, burst float64, now time.Time) *bucket {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]*bucket{}
	}
	b, ok := s.m[key]
	if !ok {
		b = &bucket{tokens: burst, last: now}
		s.m[key] = b
	}
	return b
}

// rateLimiter is a token bucket per environment.
type rateLimiter struct {
	rate    float64
	burst   float64
	now     func() time.Time
	buckets syncMap
}

func newRateLimiter(rate float64, now func() time.Time) *rateLimiter {
	return &rateLimiter{rate: rate, burst: max(rate, 1), now: now}
}

func (l *rateLimiter) allow(w http.ResponseWriter, env string) error {
	b := l.buckets.get(env, l.burst, l.now())
	remaining, wait := b.take(l.rate, l.burst, l.now())
	w.Header().Set("RateLimit-Limit", fmt.Sprintf("%.0f", l.burst))
	w.Header().Set("RateLimit-Remaining", fmt.Sprintf("%d", remaining))
	if wait > 0 {
		secs := int(wait/time.Second) + 1
		w.Header().Set("RateLimit-Reset", fmt.Sprint(secs))
		e := errorf(http.StatusTooManyRequests, "Too many requests")
		e.retryAfter = fmt.Sprint(secs)
		return e
	}
	return nil
}
