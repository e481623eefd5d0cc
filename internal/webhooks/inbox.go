package webhooks

import (
	"context"
	"sync"

	"github.com/herald-notify/herald/internal/store"
)

// In-app messages are created in several transactions — a trigger group's
// planned in-app steps, a worker's batch, a fan-out — and the store tells
// its after-commit hook of each one's new messages. InboxChanged queues
// them (the hook must not block: it runs under the store's write gate) and
// Run turns them into message.sent and message.delivered.

// maxInboxQueue bounds the message ids waiting for Run; beyond it the hook
// drops them (logged): the store's writes are never held up.
const maxInboxQueue = 100_000

// inboxBatch is how many messages one pass of Run reads and emits.
const inboxBatch = 500

type inboxQueue struct {
	mu      sync.Mutex
	changes []store.InboxChange
	ids     int
	dropped int
	signal  chan struct{}
}

// InboxChanged is the store's after-commit hook of inbox changes (chain it
// with the realtime dispatcher's): the new in-app messages of environments
// whose endpoints may take them are queued for Run. It never blocks.
func (s *Service) InboxChanged(ch store.InboxChange) {
	if s == nil || len(ch.MessageIDs) == 0 {
		return
	}
	if e := s.cache.peek(ch.EnvironmentID, s.now()); e != nil && !e.wants(MessageSent) && !e.wants(MessageDelivered) {
		return // the fast path: nobody takes them
	}
	q := &s.inbox
	q.mu.Lock()
	if q.ids+len(ch.MessageIDs) > maxInboxQueue {
		q.dropped += len(ch.MessageIDs)
		q.mu.Unlock()
		return
	}
	q.changes = append(q.changes, store.InboxChange{EnvironmentID: ch.EnvironmentID, MessageIDs: ch.MessageIDs})
	q.ids += len(ch.MessageIDs)
	q.mu.Unlock()
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

// take returns the queued changes and how many ids were dropped since the
// last take.
func (q *inboxQueue) take() ([]store.InboxChange, int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	out, dropped := q.changes, q.dropped
	q.changes, q.ids, q.dropped = nil, 0, 0
	return out, dropped
}

// Run emits the events of the in-app messages InboxChanged queues, until
// ctx ends. Every process that writes in-app messages runs it.
func (s *Service) Run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.inbox.signal:
		}
		if !pause(ctx, linger) { // gather the next commits' messages too
			return
		}
		changes, dropped := s.inbox.take()
		if dropped > 0 {
			s.log.Warn("webhooks: too many in-app messages waiting for their events; events lost", "count", dropped)
		}
		s.emitInbox(ctx, changes)
	}
}

// emitInbox emits message.sent and message.delivered for each new in-app
// message of changes.
func (s *Service) emitInbox(ctx context.Context, changes []store.InboxChange) {
	defer s.guard("emitting in-app message events")
	byEnv := map[string][]string{}
	var order []string
	for _, c := range changes {
		if byEnv[c.EnvironmentID] == nil {
			order = append(order, c.EnvironmentID)
		}
		byEnv[c.EnvironmentID] = append(byEnv[c.EnvironmentID], c.MessageIDs...)
	}
	for _, env := range order {
		if !s.Wants(ctx, env, MessageSent) && !s.Wants(ctx, env, MessageDelivered) {
			continue
		}
		ids := byEnv[env]
		for start := 0; start < len(ids); start += inboxBatch {
			chunk := ids[start:min(start+inboxBatch, len(ids))]
			msgs, err := s.o.Store.WebhookMessagesChanged(ctx, &store.WebhookMessagesChangedParams{
				Scope: store.Scope{EnvironmentID: env}, IDs: chunk})
			if err != nil {
				s.log.Error("webhooks: reading new in-app messages; their events lost", "err", err, "count", len(chunk))
				continue
			}
			// In the order they were created: sent, then delivered, each.
			at := make(map[string]int, len(chunk))
			for i, id := range chunk {
				at[id] = i
			}
			ordered := make([]*store.Message, len(chunk))
			for i := range msgs {
				ordered[at[msgs[i].ID]] = &msgs[i]
			}
			evs := make([]MessageEvent, 0, 2*len(msgs))
			for _, m := range ordered {
				if m != nil {
					evs = append(evs, MessageEvent{Type: MessageSent, Message: *m}, MessageEvent{Type: MessageDelivered, Message: *m})
				}
			}
			s.Messages(ctx, evs)
		}
	}
}
