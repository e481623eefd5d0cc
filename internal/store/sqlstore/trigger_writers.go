package sqlstore

import (
	"context"
	"slices"
	"time"
)

// How many trigger committers a process runs (each forms, plans and writes
// groups of its own). One on SQLite (one writer). On PostgreSQL the default
// follows the database's round trip and the cores: a group costs about
// seven round trips, and next to the database (≈0.1 ms) one committer keeps
// it busy — more only make smaller groups, which cost more CPU a message —
// while across a network (1–2 ms) one committer waits most of the time. A
// committer covers about writerRTT of round trip, up to maxTriggerWriters
// (a quarter of the pool) and a quarter of the cores: measured on 2 cores
// behind a 2.5 ms round trip, 1 committer delivered 988 msgs/s (half the
// CPU idle), 2 967, 4 922, 8 772 (CPU-bound).
const (
	writerRTT         = 250 * time.Microsecond
	maxTriggerWriters = 8
)

// measureRTT is the median time of a trivial query on one connection.
func (db *DB) measureRTT(ctx context.Context) time.Duration {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := db.w.Conn(ctx)
	if err != nil {
		return 0
	}
	defer conn.Close()
	var samples []time.Duration
	for range 9 {
		start := time.Now()
		var one int
		if conn.QueryRowContext(ctx, "SELECT 1").Scan(&one) != nil {
			return 0
		}
		samples = append(samples, time.Since(start))
	}
	slices.Sort(samples)
	return samples[len(samples)/2]
}

// writersFor is the default number of trigger committers for a round trip
// on cores CPUs.
func writersFor(rtt time.Duration, cores int) int {
	return min(max(1, int((rtt+writerRTT/2)/writerRTT)), maxTriggerWriters, max(1, cores/4))
}

// SetTriggerWriters sets how many trigger groups the process writes at once
// (0: the default; SQLite always writes one). It takes effect before the
// first trigger.
func (db *DB) SetTriggerWriters(n int) {
	if n > 0 && db.d.name != "sqlite" {
		db.writers.Store(int32(min(n, 64)))
	}
}

// TriggerWriters is how many trigger groups the process writes at once.
func (db *DB) TriggerWriters() int { return max(1, int(db.writers.Load())) }

// RTT is the database round trip measured when the store opened (0 on
// SQLite).
func (db *DB) RTT() time.Duration { return db.rtt }
