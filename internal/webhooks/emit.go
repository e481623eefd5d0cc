package webhooks

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/wire"
)

// Events are written from the outbox (outbox.go): the change that causes
// them writes their entry in its own transaction, so a crash after its
// commit loses none. From their write on, the events and their attempts
// are in the store, survive restarts and are delivered at least once.

// Event is an event to send: its type and its data.
type Event struct {
	Type string
	Data any
	// entry is the outbox entry it is made of ("" for none).
	entry string
}

// envelope is an event's body (the contract's "Envelope and signature").
type envelope struct {
	ID            string `json:"id"`
	Type          string `json:"type"`
	Object        string `json:"object"`
	Data          any    `json:"data"`
	Timestamp     string `json:"timestamp"`
	EnvironmentID string `json:"environmentId"`
}

// messageData is a message event's data.
type messageData struct {
	Object wire.WebhookMessage `json:"object"`
	Error  *errorData          `json:"error,omitempty"`
}

type errorData struct {
	Message string `json:"message"`
}

// WorkflowEvent is a workflow event: object is the workflow as GET
// /v2/workflows/{id} answers it; previous, when not nil, the workflow
// before the change (workflow.updated, workflow.published).
func WorkflowEvent(typ string, object, previous any) Event {
	data := map[string]any{"object": object}
	if previous != nil {
		data["previousObject"] = previous
	}
	return Event{Type: typ, Data: data}
}

// PreferenceEvent is preference.updated for the subscriber whose own id is
// subscriberID: object is {level, enabled, channels, workflow?}.
func PreferenceEvent(subscriberID string, object any) Event {
	return Event{Type: PreferenceUpdated, Data: map[string]any{"object": object, "subscriberId": subscriberID}}
}

// emit stores the events an enabled endpoint takes, with their first
// attempts, and deletes the outbox entries they are made of, in one
// transaction.
func (s *Service) emit(ctx context.Context, scope store.Scope, outbox []string, events []Event) error {
	e, err := s.entry(ctx, scope.EnvironmentID)
	if err != nil {
		return err
	}
	now := s.now()
	stored := make([]store.WebhookEvent, 0, len(events))
	for _, ev := range events {
		if !e.wants(ev.Type) {
			continue
		}
		evID := "evt_" + id.NewAt(now)
		body, err := json.Marshal(envelope{ID: evID, Type: ev.Type, Object: objectOf(ev.Type), Data: ev.Data,
			Timestamp: wire.Time(now), EnvironmentID: e.identifier})
		if err != nil {
			s.log.ErrorContext(ctx, "webhooks: encoding an event; event lost", "type", ev.Type, "err", err)
			continue
		}
		stored = append(stored, store.WebhookEvent{ID: evID, EnvironmentID: scope.EnvironmentID, Type: ev.Type, Body: body,
			CreatedAt: now, OutboxID: ev.entry})
	}
	if len(stored) == 0 && len(outbox) == 0 {
		return nil
	}
	n, err := s.o.Store.WebhookEventCreate(ctx, &store.WebhookEventCreateParams{Scope: scope, Events: stored, Outbox: outbox,
		FirstAttemptAt: now.Add(s.o.Schedule[0]), Now: now})
	if err != nil {
		return err
	}
	if n > 0 {
		s.signalWake()
	}
	return nil
}

// guard logs a panic of an emission: the change it follows is made, and
// its caller goes on.
func (s *Service) guard(what string) {
	if p := recover(); p != nil {
		s.log.Error("webhooks: recovered from a panic", "in", what, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
	}
}
