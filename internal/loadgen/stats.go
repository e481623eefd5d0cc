package loadgen

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/herald-notify/herald/internal/bench"
)

// latencies collects durations from any number of goroutines.
type latencies struct{ bench.Latencies }

func (l *latencies) add(d time.Duration) { l.Add(d) }

// Summary is the distribution of some durations.
type Summary struct {
	N        int
	P50, P99 time.Duration
}

// summary returns the count and the nearest-rank 50th and 99th percentiles.
func (l *latencies) summary() Summary {
	return Summary{N: l.Len(), P50: l.Percentile(50), P99: l.Percentile(99)}
}

// String renders the summary for the report's table.
func (s Summary) String() string {
	if s.N == 0 {
		return "- (no samples)"
	}
	return fmt.Sprintf("p50 %s, p99 %s (%d samples)", ms(s.P50), ms(s.P99), s.N)
}

// ms renders a duration as milliseconds.
func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 2, 64) + " ms"
}

// errorCounts counts wrong answers by what was wrong, keeping one example
// of each.
type errorCounts struct {
	mu sync.Mutex
	n  map[string]int
}

func (e *errorCounts) add(what string) {
	e.mu.Lock()
	if e.n == nil {
		e.n = map[string]int{}
	}
	e.n[what]++
	e.mu.Unlock()
}

func (e *errorCounts) snapshot() map[string]int {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make(map[string]int, len(e.n))
	for k, v := range e.n {
		out[k] = v
	}
	return out
}

// Memory is a process's resident set from /proc/PID/status.
type Memory struct {
	PID       int
	HWM, RSS  int64 // bytes: VmHWM (the peak) and VmRSS (now)
	Err       error
	Collected bool
}

// ReadMemory reads VmHWM and VmRSS of a process (Linux).
func ReadMemory(pid int) Memory {
	m := Memory{PID: pid, Collected: true}
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		m.Err = err
		return m
	}
	for line := range strings.SplitSeq(string(raw), "\n") {
		name, value, ok := strings.Cut(line, ":")
		if !ok || (name != "VmHWM" && name != "VmRSS") {
			continue
		}
		f := strings.Fields(value) // "123456 kB"
		if len(f) != 2 || f[1] != "kB" {
			continue
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			continue
		}
		if name == "VmHWM" {
			m.HWM = kb << 10
		} else {
			m.RSS = kb << 10
		}
	}
	if m.HWM == 0 && m.RSS == 0 {
		m.Err = fmt.Errorf("no VmHWM/VmRSS in /proc/%d/status", pid)
	}
	return m
}

// String renders the memory for the report's table.
func (m Memory) String() string {
	if m.Err != nil {
		return "unread: " + m.Err.Error()
	}
	return fmt.Sprintf("peak (VmHWM) %d MB, now (VmRSS) %d MB", m.HWM>>20, m.RSS>>20)
}
