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
// entry in its own transaction. The store tells this process of the
// entries its commits wrote (written), and Run makes their events at once,
// without a claim: a new entry is its writer's for store.OutboxHold. Every
// Poll, Run also claims the entries whose time has come — another
// process's that died or failed — under a lease. Making an entry's events
// and deleting it is one transaction, and only the drain whose delete
// removed the entry stores its events: each entry's events are stored
// once.

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
	st.SetWebhookOutbox(s.Wants, s.written)
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

// Run drains the outbox until ctx ends: the entries this process's store
// wrote as soon as it tells of them (without claiming them: they are this
// process's for store.OutboxHold), and every Poll the due entries of any
// process — another's, or those a process that stopped left.
func (s *Service) Run(ctx context.Context) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		poll := false
		select {
		case <-ctx.Done():
			return
		case <-s.drainWake:
			if !pause(ctx, linger) { // gather the next commits' entries too
				return
			}
		case <-timer.C:
			poll = true
		}
		if err := s.drainOwn(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("webhooks: making the events of this process's changes; a later drain makes them", "err", err)
		}
		if !poll {
			continue
		}
		if err := s.drainDue(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("webhooks: draining the outbox", "err", err)
		}
		timer.Reset(s.o.Poll)
	}
}

// Drain makes the events of this process's entries, then of the due ones
// (tests).
func (s *Service) Drain(ctx context.Context) error {
	if err := s.drainOwn(ctx); err != nil {
		return err
	}
	return s.drainDue(ctx)
}

// maxOwn bounds the entries told by the store that wait for drainOwn;
// beyond it they are left to the drains that claim due entries.
const maxOwn = 10_000

// written is the store's after-commit hook: it queues the entries for
// drainOwn and wakes Run. It never blocks.
func (s *Service) written(entries []store.OutboxEntry) {
	s.ownMu.Lock()
	if len(s.own)+len(entries) <= maxOwn {
		s.own = append(s.own, entries...)
	}
	s.ownMu.Unlock()
	select {
	case s.drainWake <- struct{}{}:
	default:
	}
}

// drainOwn makes the events of the entries the store told of.
func (s *Service) drainOwn(ctx context.Context) error {
	s.ownMu.Lock()
	own := s.own
	s.own = nil
	s.ownMu.Unlock()
	for start := 0; start < len(own); start += outboxBatch {
		if err := s.complete(ctx, own[start:min(start+outboxBatch, len(own))]); err != nil {
			return err
		}
	}
	return nil
}

// drainDue claims due entries and makes their events until none is left.
func (s *Service) drainDue(ctx context.Context) error {
	for {
		entries, err := s.o.Store.WebhookOutboxClaim(ctx, kinds, outboxBatch, outboxLeases*s.o.Timeout, s.now())
		if err != nil {
			return err
		}
		if err := s.complete(ctx, entries); err != nil || len(entries) < outboxBatch {
			return err
		}
	}
}

// complete stores the events of entries and deletes them, a transaction
// per environment. An entry that fails to render is left to a later drain.
func (s *Service) complete(ctx context.Context, entries []store.OutboxEntry) error {
	if len(entries) == 0 {
		return nil
	}
	type group struct {
		scope  store.Scope
		outbox []string
		events []Event
	}
	byEnv := map[string]*group{}
	var order []string
	look := map[string]*messageLookup{} // per environment, for all its entries
	for _, e := range entries {
		g := byEnv[e.EnvironmentID]
		if g == nil {
			g = &group{scope: store.Scope{OrganizationID: e.OrganizationID, EnvironmentID: e.EnvironmentID}}
			byEnv[e.EnvironmentID], order = g, append(order, e.EnvironmentID)
			look[e.EnvironmentID] = &messageLookup{env: e.EnvironmentID}
		}
		var evs []Event
		var err error
		if e.Claims > maxOutboxClaims {
			s.log.Error("webhooks: an outbox entry failed to render too many times; its events lost", "entry", e.ID, "kind", e.Kind)
		} else if evs, err = s.renderEntry(ctx, e, look[e.EnvironmentID], entries); err != nil {
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
			return err
		}
	}
	return nil
}

// renderEntry makes an entry's events, a panic its error.
func (s *Service) renderEntry(ctx context.Context, e store.OutboxEntry, look *messageLookup, batch []store.OutboxEntry) (evs []Event, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.log.ErrorContext(ctx, "webhooks: recovered from a panic rendering an outbox entry", "panic", fmt.Sprint(p),
				"stack", string(debug.Stack()))
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	switch e.Kind {
	case store.OutboxMessages:
		if err := s.lookUp(ctx, look, batch); err != nil {
			return nil, err
		}
		return renderMessages(e, look)
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

// messageLookup holds, for the message entries of one environment in a
// batch, the messages read by id and the subscribers' own ids: one read of
// each for the batch.
type messageLookup struct {
	env  string
	done bool
	msgs map[string]*store.Message
	subs map[string]store.Subscriber
}

// outboxItems decodes a message entry's Ref.
func outboxItems(e store.OutboxEntry) ([]store.OutboxMessage, error) {
	var items []store.OutboxMessage
	if err := json.Unmarshal(e.Ref, &items); err != nil {
		return nil, fmt.Errorf("decoding: %w", err)
	}
	return items, nil
}

// lookUp reads, once, the messages and subscribers that the message entries
// of look's environment in batch need.
func (s *Service) lookUp(ctx context.Context, look *messageLookup, batch []store.OutboxEntry) error {
	if look.done {
		return nil
	}
	var ids, subs []string
	seen := map[string]bool{}
	for _, e := range batch {
		if e.EnvironmentID != look.env || e.Kind != store.OutboxMessages {
			continue
		}
		items, err := outboxItems(e)
		if err != nil {
			continue // its own render says so
		}
		for _, it := range items {
			switch {
			case it.Message != nil && !seen["s"+it.Message.SubscriberID]:
				seen["s"+it.Message.SubscriberID], subs = true, append(subs, it.Message.SubscriberID)
			case it.Message == nil && it.MessageID != "" && !seen["m"+it.MessageID]:
				seen["m"+it.MessageID], ids = true, append(ids, it.MessageID)
			}
		}
	}
	look.msgs = map[string]*store.Message{}
	if len(ids) > 0 {
		msgs, err := s.o.Store.WebhookMessagesChanged(ctx, &store.WebhookMessagesChangedParams{
			Scope: store.Scope{EnvironmentID: look.env}, IDs: ids})
		if err != nil {
			return err
		}
		for i := range msgs {
			look.msgs[msgs[i].ID] = &msgs[i]
			if !seen["s"+msgs[i].SubscriberID] {
				seen["s"+msgs[i].SubscriberID], subs = true, append(subs, msgs[i].SubscriberID)
			}
		}
	}
	look.subs = map[string]store.Subscriber{}
	if len(subs) > 0 {
		var err error
		if look.subs, err = s.o.Store.SubscribersByID(ctx, look.env, subs); err != nil {
			return err
		}
	}
	look.done = true
	return nil
}

// renderMessages makes the message events of an entry: each message as the
// change left it or, for a new in-app message, as it is now (one deleted
// since has none).
func renderMessages(e store.OutboxEntry, look *messageLookup) ([]Event, error) {
	items, err := outboxItems(e)
	if err != nil {
		return nil, err
	}
	out := make([]Event, 0, len(items))
	for _, it := range items {
		m := it.Message
		if m == nil {
			m = look.msgs[it.MessageID]
		}
		if m == nil {
			continue
		}
		data := messageData{Object: wire.WebhookMessageOf(m, look.subs[m.SubscriberID].SubscriberID)}
		if it.Type == MessageFailed {
			data.Error = &errorData{Message: m.ErrorText}
		}
		out = append(out, Event{Type: it.Type, Data: data})
	}
	return out, nil
}
