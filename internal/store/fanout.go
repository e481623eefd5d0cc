package store

import (
	"context"
	"time"
)

// JobFanout is the type of the job that fans a trigger out to the members
// of its topics (or, for a broadcast, to every subscriber): it belongs to
// no notification and creates the notifications of its recipients, a batch
// at a time.
const JobFanout = "fanout"

// TopicRecipient is a topic named in a trigger's `to`.
type TopicRecipient struct {
	Key string
	// Exclude are subscriberIds left out of this topic's fan-out.
	Exclude []string
}

// FanoutRunParams runs the next batch of a claimed fan-out job.
type FanoutRunParams struct {
	Job Job // as claimed (ID and Attempts guard against a stale worker)
	// Limit bounds the recipients of this batch.
	Limit int
	// Yield queues the job again after this batch (when recipients remain),
	// so that other work runs between batches; otherwise the job stays
	// leased for another batch, its lease extended by Lease.
	Yield bool
	Lease time.Duration
	Now   time.Time
}

// FanoutRunResult says what a batch did.
type FanoutRunResult struct {
	// Applied is false when the job is no longer leased under the claimed
	// attempt (lost lease, canceled): nothing was written.
	Applied bool
	// Created is how many notifications the batch created.
	Created int
	// Done is true when no recipient remains: the job is completed.
	Done bool
}

// Fanout runs fan-out jobs.
type Fanout interface {
	// FanoutRun writes, in one transaction, the notifications (and their
	// jobs) of the next recipients of a fan-out job in _id order, and moves
	// its cursor past them: a batch is written whole or not at all, and a
	// recipient never twice.
	FanoutRun(ctx context.Context, p *FanoutRunParams) (FanoutRunResult, error)
}
