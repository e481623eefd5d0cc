package bench

import (
	"slices"
	"sync"
	"time"
)

// Latencies collects durations from any number of goroutines.
type Latencies struct {
	mu sync.Mutex
	d  []time.Duration
}

// Add records one duration.
func (l *Latencies) Add(d time.Duration) {
	l.mu.Lock()
	l.d = append(l.d, d)
	l.mu.Unlock()
}

// Len is the number of durations recorded.
func (l *Latencies) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.d)
}

// Percentile returns the nearest-rank p-th percentile (0 < p ≤ 100), or 0
// when nothing was recorded.
func (l *Latencies) Percentile(p float64) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.d) == 0 {
		return 0
	}
	s := slices.Clone(l.d)
	slices.Sort(s)
	rank := int(p/100*float64(len(s)) + 0.999999)
	return s[min(max(rank, 1), len(s))-1]
}

// Milliseconds renders d as fractional milliseconds, for b.ReportMetric.
func Milliseconds(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
