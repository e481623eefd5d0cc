package webhooks

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/wire"
)

// The outbox (store/outbox.go): every change that causes events writes an
// entry in its own transaction. Run drains the entries of every process's
// changes — at once for this process's (the store's written hook wakes
// it), within Poll for the others' and for those a process that stopped
// left — turning each into its events and deleting it in one transaction.

// outboxBatch is how many entries one drain claims at a time.
const outboxBatch = 100

// outboxLeases is how long a drain holds the entries it claimed, in time
// limits of an attempt (Options.Timeout): 30 s at the default 15 s. A
// drain takes milliseconds; the lease only matters when its process dies.
const outboxLeases = 2

// maxOutboxClaims drops an entry that drains failed to render this many
// times (logged): one broken entry does not come back for ever.
const maxOutboxClaims = 10

// Outbox makes the store write the entries of its changes' message events
// that an endpoint may take, and wake Run after their commit.
func (s *Service) Outbox(st store.WebhookOutbox) {
	st.SetWebhookOutbox(s.Wants, func() {
		select {
		case s.drainWake <- struct{}{}:
		default:
		}
	})
}

// kinds are the entry kinds a drain claims.
var kinds = []string{store.OutboxMessages, store.OutboxEvents}

// Events is the intent of events rendered in a change's transaction (see
// store.OutboxIntent.Render): pass it to the change's store call with
// store.WithOutbox. It is nil when no endpoint of the scope's environment
// takes typ.
func (s *Service) Events(ctx context.Context, scope store.Scope, typ string,
	render func(ctx context.Context, tx store.OutboxTx) ([]Event, error)) *store.OutboxIntent {
	if s == nil || !s.Wants(ctx, scope.EnvironmentID, typ) {
		return nil
	}
	return &store.OutboxIntent{Scope: scope, Render: func(ctx context.Context, tx store.OutboxTx) ([]store.OutboxEvent, error) {
		evs, err := render(ctx, tx)
		if err != nil {
			return nil, err
		}
		out := make([]store.OutboxEvent, 0, len(evs))
		for _, ev := range evs {
			b, err := json.Marshal(ev.Data)
			if err != nil {
				return nil, err
			}
			out = append(out, store.OutboxEvent{Type: ev.Type, Data: b})
		}
		return out, nil
	}}
}

// MessagesChanged is the intent of an event of type typ for each message of sel
// that the change writes (sel.At is the change's time): pass it to the
// change's store call with store.WithOutbox. It is nil when no endpoint of
// sel's environment takes typ.
func (s *Service) MessagesChanged(ctx context.Context, typ string, sel store.WebhookMessagesChangedParams) *store.OutboxIntent {
	if s == nil || typ == "" || !s.Wants(ctx, sel.EnvironmentID, typ) {
		return nil
	}
	return &store.OutboxIntent{Scope: sel.Scope, Type: typ, Changed: &sel}
}

// Run drains the outbox until ctx ends: when this process's store wrote
// entries, and every Poll for other processes' and for held entries
// whose writer did not complete them.
func (s *Service) Run(ctx context.Context) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.drainWake:
			if !pause(ctx, linger) { // gather the next commits' entries too
				return
			}
		case <-timer.C:
		}
		for {
			n, err := s.drain(ctx)
			if err != nil {
				if ctx.Err() == nil {
					s.log.Warn("webhooks: draining the outbox", "err", err)
				}
				break
			}
			if n < outboxBatch {
				break
			}
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(s.o.Poll)
	}
}

// Drain makes events of the due outbox entries until none is left
// (tests).
func (s *Service) Drain(ctx context.Context) error {
	for {
		n, err := s.drain(ctx)
		if err != nil || n < outboxBatch {
			return err
		}
	}
}

// drain claims due entries and stores their events; it returns how many it
// claimed. An entry that fails to render is left to its lease's end.
func (s *Service) drain(ctx context.Context) (int, error) {
	entries, err := s.o.Store.WebhookOutboxClaim(ctx, kinds, outboxBatch, outboxLeases*s.o.Timeout, s.now())
	if err != nil || len(entries) == 0 {
		return 0, err
	}
	type group struct {
		scope  store.Scope
		outbox []string
		events []Event
	}
	byEnv := map[string]*group{}
	var order []string
	for _, e := range entries {
		g := byEnv[e.EnvironmentID]
		if g == nil {
			g = &group{scope: store.Scope{OrganizationID: e.OrganizationID, EnvironmentID: e.EnvironmentID}}
			byEnv[e.EnvironmentID], order = g, append(order, e.EnvironmentID)
		}
		var evs []Event
		if e.Claims > maxOutboxClaims {
			s.log.Error("webhooks: an outbox entry failed to render too many times; its events lost", "entry", e.ID, "kind", e.Kind)
		} else if evs, err = s.renderEntry(ctx, e); err != nil {
			s.log.Warn("webhooks: rendering an outbox entry; tried again later", "entry", e.ID, "kind", e.Kind, "err", err)
			continue
		}
		for i := range evs {
			evs[i].entry = e.ID
		}
		g.outbox, g.events = append(g.outbox, e.ID), append(g.events, evs...)
	}
	for _, env := range order {
		g := byEnv[env]
		if err := s.emit(ctx, g.scope, g.outbox, g.events); err != nil {
			return len(entries), err
		}
	}
	return len(entries), nil
}

// renderEntry makes an entry's events, a panic its error.
func (s *Service) renderEntry(ctx context.Context, e store.OutboxEntry) (evs []Event, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.log.ErrorContext(ctx, "webhooks: recovered from a panic rendering an outbox entry", "panic", fmt.Sprint(p),
				"stack", string(debug.Stack()))
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	switch e.Kind {
	case store.OutboxMessages:
		return s.renderMessages(ctx, e)
	case store.OutboxEvents:
		var items []store.OutboxEvent
		if err := json.Unmarshal(e.Ref, &items); err != nil {
			return nil, fmt.Errorf("decoding: %w", err)
		}
		out := make([]Event, len(items))
		for i, it := range items {
			out[i] = Event{Type: it.Type, Data: it.Data}
		}
		return out, nil
	}
	return nil, fmt.Errorf("an entry of unknown kind %q", e.Kind)
}

// renderMessages makes the message events of an entry: each message as the
// change left it or, for a new in-app message, as it is now (one deleted
// since has none).
func (s *Service) renderMessages(ctx context.Context, e store.OutboxEntry) ([]Event, error) {
	var items []store.OutboxMessage
	if err := json.Unmarshal(e.Ref, &items); err != nil {
		return nil, fmt.Errorf("decoding: %w", err)
	}
	var ids []string
	for _, it := range items {
		if it.Message == nil && it.MessageID != "" {
			ids = append(ids, it.MessageID)
		}
	}
	byID := map[string]*store.Message{}
	if len(ids) > 0 {
		msgs, err := s.o.Store.WebhookMessagesChanged(ctx, &store.WebhookMessagesChangedParams{
			Scope: store.Scope{EnvironmentID: e.EnvironmentID}, IDs: ids})
		if err != nil {
			return nil, err
		}
		for i := range msgs {
			byID[msgs[i].ID] = &msgs[i]
		}
	}
	var subs []string
	seen := map[string]bool{}
	for i, it := range items {
		if it.Message == nil {
			items[i].Message = byID[it.MessageID]
		}
		if m := items[i].Message; m != nil && !seen[m.SubscriberID] {
			seen[m.SubscriberID], subs = true, append(subs, m.SubscriberID)
		}
	}
	var known map[string]store.Subscriber
	if len(subs) > 0 {
		var err error
		if known, err = s.o.Store.SubscribersByID(ctx, e.EnvironmentID, subs); err != nil {
			return nil, err
		}
	}
	out := make([]Event, 0, len(items))
	for _, it := range items {
		m := it.Message
		if m == nil {
			continue
		}
		data := messageData{Object: wire.WebhookMessageOf(m, known[m.SubscriberID].SubscriberID)}
		if it.Type == MessageFailed {
			data.Error = &errorData{Message: m.ErrorText}
		}
		out = append(out, Event{Type: it.Type, Data: data})
	}
	return out, nil
}
