package httpapi

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/webhooks"
)

// The webhook events of the API's changes, emitted after the change is
// written and before the answer (internal/webhooks): each helper first
// asks whether an endpoint of the environment takes the event, so an
// environment without endpoints pays one cached look-up.

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

// emitMessages emits typ ("" for none) for messages of sub after a change.
func (s *Server) emitMessages(r *http.Request, typ string, sub store.Subscriber, ms []store.Message) {
	if typ == "" || len(ms) == 0 || !s.webhooks.Wants(r.Context(), callerFrom(r.Context()).EnvironmentID, typ) {
		return
	}
	evs := make([]webhooks.MessageEvent, len(ms))
	for i := range ms {
		evs[i] = webhooks.MessageEvent{Type: typ, Message: ms[i], SubscriberID: sub.SubscriberID}
	}
	s.webhooks.Messages(r.Context(), evs)
}

// changeEvents are the events a change of several messages will emit,
// prepared before it (nil: no endpoint takes them).
type changeEvents struct {
	typ string
	sel store.WebhookMessagesChangedParams
}

// watchChange prepares the events of type typ ("" for none) of a change of
// the messages sel selects. A delete of many is looked up before it, so
// that the events' read after it is by primary key.
func (s *Server) watchChange(r *http.Request, typ string, sel store.WebhookMessagesChangedParams) *changeEvents {
	scope := callerFrom(r.Context()).Scope
	if typ == "" || !s.webhooks.Wants(r.Context(), scope.EnvironmentID, typ) {
		return nil
	}
	sel.Scope = scope
	if typ == webhooks.MessageDeleted && len(sel.IDs) == 0 {
		ms, err := s.store.WebhookMessagesChanged(r.Context(), &sel)
		if err != nil {
			s.log.ErrorContext(r.Context(), "webhooks: reading the messages of a change; their events lost", "type", typ, "err", err)
			return nil
		}
		if len(ms) == 0 {
			return nil
		}
		sel = store.WebhookMessagesChangedParams{Scope: scope, IDs: make([]string, len(ms))}
		for i := range ms {
			sel.IDs[i] = ms[i].ID
		}
	}
	return &changeEvents{typ: typ, sel: sel}
}

// emitChanged emits the events of c's change, made at now: for the
// messages it selects whose last change is now (the change's time, written
// on every message it changes; deleted ones included).
func (s *Server) emitChanged(r *http.Request, c *changeEvents, now time.Time) {
	if c == nil {
		return
	}
	c.sel.At = now
	ms, err := s.store.WebhookMessagesChanged(r.Context(), &c.sel)
	if err != nil {
		s.log.ErrorContext(r.Context(), "webhooks: reading the changed messages; their events lost", "type", c.typ, "err", err)
		return
	}
	evs := make([]webhooks.MessageEvent, len(ms))
	for i := range ms {
		evs[i] = webhooks.MessageEvent{Type: c.typ, Message: ms[i]}
	}
	s.webhooks.Messages(r.Context(), evs)
}

// wantsWorkflowEvent reports whether an endpoint takes typ, before a
// handler builds the workflow's previous state.
func (s *Server) wantsWorkflowEvent(r *http.Request, typ string) bool {
	return s.webhooks.Wants(r.Context(), callerFrom(r.Context()).EnvironmentID, typ)
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

// emitWorkflow emits a workflow event of the caller's environment: object
// is the workflow as GET /v2/workflows/{id} answers it, previous (nil for
// none) before the change.
func (s *Server) emitWorkflow(r *http.Request, typ string, object any, previous json.RawMessage) {
	if !s.wantsWorkflowEvent(r, typ) {
		return
	}
	var prev any
	if previous != nil {
		prev = previous
	}
	s.webhooks.Emit(r.Context(), callerFrom(r.Context()).Scope, webhooks.WorkflowEvent(typ, snapshot(object), prev))
}

// emitPreferences emits preference.updated for each preference of the
// subscriber whose own id is subscriberID.
func (s *Server) emitPreferences(r *http.Request, subscriberID string, prefs ...inboxPreferenceJSON) {
	if len(prefs) == 0 || !s.wantsWorkflowEvent(r, webhooks.PreferenceUpdated) {
		return
	}
	evs := make([]webhooks.Event, len(prefs))
	for i, p := range prefs {
		evs[i] = webhooks.PreferenceEvent(subscriberID, p)
	}
	s.webhooks.Emit(r.Context(), callerFrom(r.Context()).Scope, evs...)
}

// emitPublished emits workflow.published in the source environment for
// each workflow a publish wrote into target: the target's workflow, and
// the source's as previousObject.
func (s *Server) emitPublished(r *http.Request, source, target store.Scope, keys []string) {
	if len(keys) == 0 || !s.webhooks.Wants(r.Context(), source.EnvironmentID, webhooks.WorkflowPublished) {
		return
	}
	evs := make([]webhooks.Event, 0, len(keys))
	for _, key := range keys {
		to, err := s.store.WorkflowGet(r.Context(), target, key)
		if err != nil {
			continue // deleted by the publish, or since
		}
		from, err := s.store.WorkflowGet(r.Context(), source, key)
		var prev any
		if err == nil {
			prev = snapshot(workflowOut(from))
		}
		evs = append(evs, webhooks.WorkflowEvent(webhooks.WorkflowPublished, snapshot(workflowOut(to)), prev))
	}
	s.webhooks.Emit(r.Context(), source, evs...)
}

// emitWorkflowCreated emits workflow.created for wf.
func (s *Server) emitWorkflowCreated(r *http.Request, wf store.Workflow) {
	s.emitWorkflow(r, webhooks.WorkflowCreated, workflowOut(wf), nil)
}

// emitWorkflowDeleted emits workflow.deleted for wf, as it was.
func (s *Server) emitWorkflowDeleted(r *http.Request, wf store.Workflow) {
	s.emitWorkflow(r, webhooks.WorkflowDeleted, workflowOut(wf), nil)
}

// workflowBefore is wf as GET answers it before a change, when an endpoint
// takes workflow.updated (else nil).
func (s *Server) workflowBefore(r *http.Request, wf store.Workflow) json.RawMessage {
	if !s.wantsWorkflowEvent(r, webhooks.WorkflowUpdated) {
		return nil
	}
	return snapshot(workflowOut(wf))
}

// emitWorkflowUpdated emits workflow.updated for wf after a change;
// previous is workflowBefore's (nil: no endpoint took it then).
func (s *Server) emitWorkflowUpdated(r *http.Request, wf store.Workflow, previous json.RawMessage) {
	if previous != nil {
		s.emitWorkflow(r, webhooks.WorkflowUpdated, workflowOut(wf), previous)
	}
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

// emitGlobalPreference emits preference.updated for a subscriber's global
// preference after a change (active: the active workflows).
func (s *Server) emitGlobalPreference(r *http.Request, subscriberID string, prefs store.SubscriberPreferences, active []store.Workflow) {
	if s.wantsWorkflowEvent(r, webhooks.PreferenceUpdated) {
		s.emitPreferences(r, subscriberID, inboxGlobalOut(prefs, active))
	}
}

// emitWorkflowPreferences emits preference.updated for a subscriber's
// preference of each workflow after a change.
func (s *Server) emitWorkflowPreferences(r *http.Request, subscriberID string, prefs store.SubscriberPreferences, wfs ...store.Workflow) {
	if !s.wantsWorkflowEvent(r, webhooks.PreferenceUpdated) {
		return
	}
	out := make([]inboxPreferenceJSON, len(wfs))
	for i, wf := range wfs {
		out[i] = inboxWorkflowOut(wf, prefs)
	}
	s.emitPreferences(r, subscriberID, out...)
}
