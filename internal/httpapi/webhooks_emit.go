package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/webhooks"
)

// The webhook events of the API's changes go through the outbox
// (internal/webhooks/outbox.go): each helper returns the request whose
// context asks the store to write the change's events in the change's own
// transaction — read or rendered there, before the commit — so that a
// crash after the commit loses none. Each first asks whether an endpoint
// of the environment takes the event: an environment without endpoints
// pays one cached look-up. Call the change's store method with the
// returned request's context.

// inboxEvents are the event types of the inbox actions.
var inboxEvents = map[string]string{
	store.InboxRead: webhooks.MessageRead, store.InboxUnread: webhooks.MessageUnread, store.InboxSeen: webhooks.MessageSeen,
	store.InboxArchive: webhooks.MessageArchived, store.InboxUnarchive: webhooks.MessageUnarchived,
	store.InboxSnooze: webhooks.MessageSnoozed, store.InboxUnsnooze: webhooks.MessageUnsnoozed,
	store.InboxDelete: webhooks.MessageDeleted,
}

// markEvents are the event types of v1 mark-as and mark-all (unseen has none).
var markEvents = map[string]string{
	store.MarkRead: webhooks.MessageRead, store.MarkSeen: webhooks.MessageSeen, store.MarkUnread: webhooks.MessageUnread,
}

// withIntent is r with in added to its context's outbox intents.
func withIntent(r *http.Request, in *store.OutboxIntent) *http.Request {
	if in == nil {
		return r
	}
	return r.WithContext(store.WithOutbox(r.Context(), in))
}

// watchChange asks for an event of type typ ("" for none) for each message
// that sel selects and the change writes at now. A delete of many is
// looked up before it, so that the events' read in its transaction is by
// primary key.
func (s *Server) watchChange(r *http.Request, typ string, sel store.WebhookMessagesChangedParams, now time.Time) *http.Request {
	scope := callerFrom(r.Context()).Scope
	if typ == "" || !s.webhooks.Wants(r.Context(), scope.EnvironmentID, typ) {
		return r
	}
	sel.Scope = scope
	if typ == webhooks.MessageDeleted && len(sel.IDs) == 0 {
		ms, err := s.store.WebhookMessagesChanged(r.Context(), &sel)
		if err != nil {
			s.log.ErrorContext(r.Context(), "webhooks: reading the messages of a change; their events lost", "type", typ, "err", err)
			return r
		}
		if len(ms) == 0 {
			return r
		}
		sel = store.WebhookMessagesChangedParams{Scope: scope, IDs: make([]string, len(ms))}
		for i := range ms {
			sel.IDs[i] = ms[i].ID
		}
	}
	sel.At = now
	return withIntent(r, s.webhooks.MessagesChanged(r.Context(), typ, sel))
}

// watchEvents asks for the events render makes in the change's
// transaction, of the scope's environment, when an endpoint takes typ.
func (s *Server) watchEvents(r *http.Request, scope store.Scope, typ string,
	render func(ctx context.Context, tx store.OutboxTx) ([]webhooks.Event, error)) *http.Request {
	return withIntent(r, s.webhooks.Events(r.Context(), scope, typ, render))
}

// snapshot is v encoded now, so that later changes to what it refers to do
// not change it (nil for nil).
func snapshot(v any) json.RawMessage {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

// watchWorkflowCreated asks for workflow.created for *wf as the store
// writes it.
func (s *Server) watchWorkflowCreated(r *http.Request, wf *store.Workflow) *http.Request {
	return s.watchEvents(r, callerFrom(r.Context()).Scope, webhooks.WorkflowCreated,
		func(context.Context, store.OutboxTx) ([]webhooks.Event, error) {
			return []webhooks.Event{webhooks.WorkflowEvent(webhooks.WorkflowCreated, workflowOut(*wf), nil)}, nil
		})
}

// watchWorkflowDeleted asks for workflow.deleted for wf, as it is before
// its delete.
func (s *Server) watchWorkflowDeleted(r *http.Request, wf store.Workflow) *http.Request {
	object := snapshot(workflowOut(wf))
	return s.watchEvents(r, callerFrom(r.Context()).Scope, webhooks.WorkflowDeleted,
		func(context.Context, store.OutboxTx) ([]webhooks.Event, error) {
			return []webhooks.Event{webhooks.WorkflowEvent(webhooks.WorkflowDeleted, object, nil)}, nil
		})
}

// workflowBefore is wf as GET answers it before a change, when an endpoint
// takes workflow.updated (else nil).
func (s *Server) workflowBefore(r *http.Request, wf store.Workflow) json.RawMessage {
	if !s.webhooks.Wants(r.Context(), callerFrom(r.Context()).EnvironmentID, webhooks.WorkflowUpdated) {
		return nil
	}
	return snapshot(workflowOut(wf))
}

// watchWorkflowUpdated asks for workflow.updated for *wf as the store
// writes it; previous is workflowBefore's (nil: no endpoint took it then).
func (s *Server) watchWorkflowUpdated(r *http.Request, wf *store.Workflow, previous json.RawMessage) *http.Request {
	if previous == nil {
		return r
	}
	return s.watchEvents(r, callerFrom(r.Context()).Scope, webhooks.WorkflowUpdated,
		func(context.Context, store.OutboxTx) ([]webhooks.Event, error) {
			return []webhooks.Event{webhooks.WorkflowEvent(webhooks.WorkflowUpdated, workflowOut(*wf), previous)}, nil
		})
}

// watchPublished asks for workflow.published in the source environment for
// each workflow the publish writes into target: the target's workflow, and
// the source's as previousObject.
func (s *Server) watchPublished(r *http.Request, source, target store.Scope) *http.Request {
	return s.watchEvents(r, source, webhooks.WorkflowPublished, func(ctx context.Context, tx store.OutboxTx) ([]webhooks.Event, error) {
		done, _ := tx.Result().([]store.Published)
		keys := publishedWorkflows(done)
		evs := make([]webhooks.Event, 0, len(keys))
		for _, key := range keys {
			to, err := tx.WorkflowGet(ctx, target, key)
			if errors.Is(err, store.ErrNotFound) {
				continue
			}
			if err != nil {
				return nil, err
			}
			var prev any
			if from, err := tx.WorkflowGet(ctx, source, key); err == nil {
				prev = workflowOut(from)
			}
			evs = append(evs, webhooks.WorkflowEvent(webhooks.WorkflowPublished, workflowOut(to), prev))
		}
		return evs, nil
	})
}

// publishedWorkflows are the keys of the workflows a publish created or
// updated in its target.
func publishedWorkflows(done []store.Published) []string {
	var keys []string
	for _, d := range done {
		if d.Kind == store.ResourceWorkflow && d.Action != store.PromoteDeleted {
			keys = append(keys, d.Key)
		}
	}
	return keys
}

// watchGlobalPreference asks for preference.updated for the global
// preference of the subscriber whose own id is subscriberID, as the
// change leaves it.
func (s *Server) watchGlobalPreference(r *http.Request, subscriberID string) (*http.Request, error) {
	if !s.webhooks.Wants(r.Context(), callerFrom(r.Context()).EnvironmentID, webhooks.PreferenceUpdated) {
		return r, nil
	}
	active, err := s.activeWorkflows(r)
	if err != nil {
		return r, err
	}
	return s.watchPreferences(r, subscriberID, func(prefs store.SubscriberPreferences) []inboxPreferenceJSON {
		return []inboxPreferenceJSON{inboxGlobalOut(prefs, active)}
	}), nil
}

// watchWorkflowPreferences asks for preference.updated for the
// subscriber's preference of each workflow, as the change leaves it.
func (s *Server) watchWorkflowPreferences(r *http.Request, subscriberID string, wfs ...store.Workflow) *http.Request {
	return s.watchPreferences(r, subscriberID, func(prefs store.SubscriberPreferences) []inboxPreferenceJSON {
		out := make([]inboxPreferenceJSON, len(wfs))
		for i, wf := range wfs {
			out[i] = inboxWorkflowOut(wf, prefs)
		}
		return out
	})
}

// watchPreferences asks for preference.updated for each preference out
// makes of the subscriber's preferences the change writes.
func (s *Server) watchPreferences(r *http.Request, subscriberID string, out func(store.SubscriberPreferences) []inboxPreferenceJSON) *http.Request {
	return s.watchEvents(r, callerFrom(r.Context()).Scope, webhooks.PreferenceUpdated,
		func(_ context.Context, tx store.OutboxTx) ([]webhooks.Event, error) {
			prefs, ok := tx.Result().(store.SubscriberPreferences)
			if !ok {
				return nil, nil // not a preferences change: nothing to tell
			}
			objects := out(prefs)
			evs := make([]webhooks.Event, len(objects))
			for i, o := range objects {
				evs[i] = webhooks.PreferenceEvent(subscriberID, o)
			}
			return evs, nil
		})
}
