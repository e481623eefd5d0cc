package sqlstore

import (
	"context"
	"slices"
	"time"
)

// How many trigger committers a process runs (each forms, plans and writes
// groups of its own). One on SQLite (one writer). On PostgreSQL half the
// cores, up to maxTriggerWriters: a committer's group is one statement on
// one connection, so the groups of several run on as many database backends
// side by side, and each committer's planning runs on a core of its own —
// and at least two where the database is across a network (a round trip of
// remoteRTT or more, measured at open): a trigger that arrives while the
// one committer's statement is in flight waits for it, then for its own,
// where a second committer writes it at once.
//
// Measured (docs/benchmarks.md, "Many cores"): on 16 cores next to the
// database, 128 clients, 1 committer delivered 4,264 msgs/s, 2 4,977,
// 4 6,852, 8 8,375 and 16 8,341 against a grouped raw-SQL baseline of
// 13,896. On 2 cores next to the database one committer is best (2 lose
// about a tenth of the rate: the CPU is the limit); behind a 2.2 ms round
// trip 2 deliver 4,806 / 4,818 msgs/s where 1 delivers 4,620 / 4,608.
// --trigger-writers overrides the default.
const (
	maxTriggerWriters = 8
	remoteRTT         = time.Millisecond
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

// writersFor is the default number of trigger committers on cores CPUs
// with the database rtt away.
func writersFor(cores int, rtt time.Duration) int {
	n := min(max(1, cores/2), maxTriggerWriters)
	if rtt >= remoteRTT {
		n = max(n, 2)
	}
	return n
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
