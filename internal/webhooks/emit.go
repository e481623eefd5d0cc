package webhooks

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/wire"
)

// Events are written after the change that causes them commits, in the
// process that made it: a crash between that commit and the event's write
// loses the event (docs/api-behaviour.md, "Webhooks"). From its write on,
// the event and its attempts are in the store and survive restarts.

// Event is an event to send: its type and its data.
type Event struct {
	Type string
	Data any
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

// MessageEvent is an event about a message.
type MessageEvent struct {
	Type    string
	Message store.Message
	// SubscriberID is the subscriber's own id ("": looked up by the
	// message's subscriber _id).
	SubscriberID string
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

// background is ctx without its cancellation, bounded: an event is written
// even when the request that caused it has gone.
func background(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
}

// Emit stores the events of the scope's environment that an enabled
// endpoint takes, with their first attempts. It never fails its caller,
// whose change is made: a failure is logged.
func (s *Service) Emit(ctx context.Context, scope store.Scope, events ...Event) {
	if s == nil || len(events) == 0 {
		return
	}
	ctx, cancel := background(ctx)
	defer cancel()
	defer s.guard("emitting webhook events")
	e, err := s.entry(ctx, scope.EnvironmentID)
	if err != nil {
		s.log.ErrorContext(ctx, "webhooks: reading an environment's endpoints; events lost", "err", err, "count", len(events))
		return
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
			CreatedAt: now})
	}
	if len(stored) == 0 {
		return
	}
	n, err := s.o.Store.WebhookEventCreate(ctx, &store.WebhookEventCreateParams{Scope: scope, Events: stored,
		FirstAttemptAt: now.Add(s.o.Schedule[0]), Now: now})
	if err != nil {
		s.log.ErrorContext(ctx, "webhooks: storing events; events lost", "err", err, "count", len(stored))
		return
	}
	if n > 0 {
		s.signalWake()
	}
}

// Messages emits message events, of any environments: each message's own.
// A message without SubscriberID has it looked up (only when its event is
// wanted).
func (s *Service) Messages(ctx context.Context, evs []MessageEvent) {
	if s == nil || len(evs) == 0 {
		return
	}
	defer s.guard("emitting message events")
	byEnv := map[string][]MessageEvent{}
	var order []string
	for _, ev := range evs {
		env := ev.Message.EnvironmentID
		if !s.Wants(ctx, env, ev.Type) {
			continue
		}
		if byEnv[env] == nil {
			order = append(order, env)
		}
		byEnv[env] = append(byEnv[env], ev)
	}
	for _, env := range order {
		group := byEnv[env]
		var lookup []string
		for _, ev := range group {
			if ev.SubscriberID == "" {
				lookup = append(lookup, ev.Message.SubscriberID)
			}
		}
		var subs map[string]store.Subscriber
		if len(lookup) > 0 {
			var err error
			if subs, err = s.o.Store.SubscribersByID(ctx, env, lookup); err != nil {
				s.log.ErrorContext(ctx, "webhooks: reading the subscribers of message events; events lost", "err", err)
				continue
			}
		}
		out := make([]Event, 0, len(group))
		for _, ev := range group {
			sid := ev.SubscriberID
			if sid == "" {
				sid = subs[ev.Message.SubscriberID].SubscriberID
			}
			data := messageData{Object: wire.WebhookMessageOf(&ev.Message, sid)}
			if ev.Type == MessageFailed {
				data.Error = &errorData{Message: ev.Message.ErrorText}
			}
			out = append(out, Event{Type: ev.Type, Data: data})
		}
		s.Emit(ctx, store.Scope{OrganizationID: group[0].Message.OrganizationID, EnvironmentID: env}, out...)
	}
}

// Delivered emits what became of messages a worker wrote: message.sent
// for a message its provider accepted, message.failed for one that failed
// for good. In-app messages are left out: the store's hook tells of them
// (InboxChanged), wherever they are created.
func (s *Service) Delivered(ctx context.Context, msgs []*store.Message) {
	if s == nil {
		return
	}
	var evs []MessageEvent
	for _, m := range msgs {
		if m == nil || m.Channel == "in_app" {
			continue
		}
		typ := MessageSent
		if m.Status == store.MessageError {
			typ = MessageFailed
		}
		evs = append(evs, MessageEvent{Type: typ, Message: *m})
	}
	s.Messages(ctx, evs)
}

// guard logs a panic of an emission: the change it follows is made, and
// its caller goes on.
func (s *Service) guard(what string) {
	if p := recover(); p != nil {
		s.log.Error("webhooks: recovered from a panic", "in", what, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
	}
}
