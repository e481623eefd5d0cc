package engine

import "context"

// snoozeBatch is how many snoozes one transaction of the pass ends.
const snoozeBatch = 500

// snoozeLoop ends the snoozes that are due, every poll interval, so that a
// snoozed message comes back within about a second even when no one reads
// its inbox (a read ends its subscriber's due snoozes by itself).
func (e *Engine) snoozeLoop(ctx context.Context) {
	e.every(ctx, e.o.Poll, "ending snoozes", func() {
		if n, err := e.UnsnoozeDue(ctx); err != nil && ctx.Err() == nil {
			e.log.Warn("ending snoozes", "err", err)
		} else if n > 0 {
			e.log.Debug("snoozed messages came back", "count", n)
		}
	})
}

// UnsnoozeDue ends every snooze due now, a batch per transaction, and
// returns how many it ended.
func (e *Engine) UnsnoozeDue(ctx context.Context) (int, error) {
	total := 0
	for {
		n, err := e.o.Store.InboxUnsnoozeDue(ctx, snoozeBatch, e.now())
		total += n
		if err != nil || n < snoozeBatch {
			return total, err
		}
	}
}
