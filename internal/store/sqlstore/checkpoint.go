package sqlstore

import (
	"context"
	"database/sql"
	"sync"
	"time"
)

// SQLite's checkpoints run beside the writer, not inside its commits. By
// default the commit that takes the write-ahead log past 1,000 pages copies
// the log into the database file before it returns, and every trigger of
// the group it holds waits for the copy: under 32 clients of triggers that
// was the p99 of a trigger's answer (51 ms, against 28 ms with no
// checkpoints at all). The writer's connection turns automatic checkpoints
// off (wal_autocheckpoint(0)) and a checkpointer, on a connection of its
// own, runs PRAGMA wal_checkpoint(PASSIVE) every checkpointEvery: it copies
// what no reader still needs without waiting for readers or the writer.
// Such a checkpoint never catches up with a writer that commits every few
// milliseconds, and SQLite starts the log again from its beginning only
// once all of it is copied (it grew past 1 GB in 30 s): so once the log
// holds restartFrames, the checkpointer copies the few frames left on the
// writer's own connection, under the write gate, and the next write
// transaction starts the log over. Closing the last connection checkpoints
// what is left.

const (
	// checkpointEvery is how often the checkpointer copies the log.
	checkpointEvery = 100 * time.Millisecond
	// restartFrames is the log's length (pages) past which the checkpointer
	// finishes a checkpoint between two write transactions: SQLite's
	// automatic checkpoint threshold.
	restartFrames = 1000
)

// checkpointer copies SQLite's write-ahead log into the database file.
type checkpointer struct {
	db    *sql.DB // a connection of its own
	store *DB     // the writer and its gate
	stop  chan struct{}
	wg    sync.WaitGroup
}

// startCheckpointer runs checkpoints on conn (one connection, not
// query_only) until close.
func startCheckpointer(conn *sql.DB, store *DB) *checkpointer {
	c := &checkpointer{db: conn, store: store, stop: make(chan struct{})}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		t := time.NewTicker(checkpointEvery)
		defer t.Stop()
		for {
			select {
			case <-c.stop:
				return
			case <-t.C:
				c.checkpoint()
			}
		}
	}()
	return c
}

// checkpoint copies the log, and finishes the copy on the writer's
// connection once the log is long. A failure is left for the next tick:
// the log only grows meanwhile, as it would behind a long reader.
func (c *checkpointer) checkpoint() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var busy, logged, copied int
	if err := c.db.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &logged, &copied); err != nil ||
		logged < restartFrames {
		return
	}
	if err := c.store.gate.acquire(ctx, true); err != nil {
		return
	}
	defer c.store.gate.release(true)
	c.store.w.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &logged, &copied) //nolint:errcheck // see above
}

// close stops the checkpointer and closes its connection.
func (c *checkpointer) close() error {
	close(c.stop)
	c.wg.Wait()
	return c.db.Close()
}
