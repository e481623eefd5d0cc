package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/wire"
)

// Snoozes last at least a minute and at most maxSnooze.
const (
	minSnooze = time.Minute
	maxSnooze = 90 * 24 * time.Hour
)

// inboxOutAll renders messages with their workflows, each workflow read
// once (a deleted workflow leaves workflow out).
func (s *Server) inboxOutAll(ctx context.Context, scope store.Scope, sub store.Subscriber, ms []store.Message) ([]wire.Notification, error) {
	wfs := map[string]*wire.Workflow{}
	out := make([]wire.Notification, 0, len(ms))
	for i := range ms {
		m := &ms[i]
		wf, seen := wfs[m.WorkflowID]
		if !seen {
			got, err := s.store.WorkflowGet(ctx, scope, m.WorkflowID)
			switch {
			case err == nil:
				w := wire.WorkflowOf(got)
				wf = &w
			case !errors.Is(err, store.ErrNotFound):
				return nil, err
			}
			wfs[m.WorkflowID] = wf
		}
		out = append(out, wire.NotificationOf(m, &sub, wf))
	}
	return out, nil
}

// inboxList serves GET /v2/subscribers/{subscriberId}/notifications.
func (s *Server) inboxList(w http.ResponseWriter, r *http.Request) error {
	p, echo, err := parseInboxListQuery(r.URL.Query())
	withSessionContext(r, &p.InboxFilter)
	if err != nil {
		return err
	}
	sub, err := s.inboxSubscriber(r)
	if err != nil {
		return err
	}
	scope := callerFrom(r.Context()).Scope
	p.Scope, p.SubscriberID, p.Now = scope, sub.ID, s.now()
	page, err := s.store.InboxList(r.Context(), &p)
	if errors.Is(err, store.ErrBadCursor) {
		return invalid("after", "must be the id of one of the subscriber's notifications", p.After)
	}
	if err != nil {
		return err
	}
	data, err := s.inboxOutAll(r.Context(), scope, sub, page.Messages)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"data": data, "hasMore": page.HasMore, "filter": echo})
	return nil
}

// inboxCount serves GET …/notifications/count.
func (s *Server) inboxCount(w http.ResponseWriter, r *http.Request) error {
	filters, echo, err := parseCountFilters(r.URL.Query())
	for i := range filters {
		withSessionContext(r, &filters[i])
	}
	if err != nil {
		return err
	}
	sub, err := s.inboxSubscriber(r)
	if err != nil {
		return err
	}
	counts, err := s.store.InboxCount(r.Context(), &store.InboxCountParams{Scope: callerFrom(r.Context()).Scope,
		SubscriberID: sub.ID, Filters: filters, Now: s.now()})
	if err != nil {
		return err
	}
	type countJSON struct {
		Count  int             `json:"count"`
		Filter json.RawMessage `json:"filter"`
	}
	out := make([]countJSON, len(counts))
	for i, n := range counts {
		out[i] = countJSON{Count: n, Filter: echo[i]}
	}
	s.writeInbox(w, r, out)
	return nil
}

// pathNotificationID reads the path's notificationId.
func pathNotificationID(r *http.Request) (string, error) {
	v := r.PathValue("notificationId")
	if !id.Valid(v) {
		return "", invalid("notificationId", "must be a 24-character hex identifier", v)
	}
	return v, nil
}

func notificationNotFound(err error, nid string) error {
	if errors.Is(err, store.ErrNotFound) {
		return errorf(http.StatusNotFound, "Notification "+nid+" was not found")
	}
	return err
}

// inboxChange serves PATCH …/notifications/{notificationId}/<action>.
func (s *Server) inboxChange(action string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		nid, err := pathNotificationID(r)
		if err != nil {
			return err
		}
		p := store.InboxChangeParams{Action: action, ID: nid, Now: s.now()}
		if action == store.InboxSnooze {
			if p.SnoozeUntil, err = readSnoozeUntil(r, p.Now); err != nil {
				return err
			}
		}
		return s.changeOne(w, r, &p)
	}
}

// changeOne applies p to one of the path subscriber's notifications and
// answers it.
func (s *Server) changeOne(w http.ResponseWriter, r *http.Request, p *store.InboxChangeParams) error {
	sub, err := s.inboxSubscriber(r)
	if err != nil {
		return err
	}
	scope := callerFrom(r.Context()).Scope
	p.Scope, p.SubscriberID = scope, sub.ID
	r = s.watchChange(r, inboxEvents[p.Action], store.WebhookMessagesChangedParams{SubscriberID: sub.ID, IDs: []string{p.ID}}, p.Now)
	m, err := s.store.InboxChangeOne(r.Context(), p)
	if err != nil {
		return notificationNotFound(err, p.ID)
	}
	return s.writeNotification(w, r, scope, sub, m)
}

func (s *Server) writeNotification(w http.ResponseWriter, r *http.Request, scope store.Scope, sub store.Subscriber, m store.Message) error {
	out, err := s.inboxOutAll(r.Context(), scope, sub, []store.Message{m})
	if err != nil {
		return err
	}
	s.writeInbox(w, r, out[0])
	return nil
}

// inboxSubscriber is the subscriber whose inbox a request acts on: an
// inbox session's own (/v1/inbox/*), else the path's subscriberId (the
// admin routes /v2/subscribers/{subscriberId}/notifications…).
func (s *Server) inboxSubscriber(r *http.Request) (store.Subscriber, error) {
	if sub := callerFrom(r.Context()).Subscriber; sub != nil {
		return *sub, nil
	}
	return s.pathSubscriber(r)
}

// writeInbox answers 200 with v: bare to the admin routes, enveloped in
// {"data": v} to an inbox session, whose clients unwrap data.
func (s *Server) writeInbox(w http.ResponseWriter, r *http.Request, v any) {
	if callerFrom(r.Context()).Subscriber != nil {
		v = map[string]any{"data": v}
	}
	s.writeJSON(w, http.StatusOK, v)
}

// readSnoozeUntil reads {snoozeUntil}: an RFC 3339 time from a minute to
// maxSnooze after now.
func readSnoozeUntil(r *http.Request, now time.Time) (time.Time, error) {
	o, err := readObject(r)
	if err != nil {
		return time.Time{}, err
	}
	v := o.text("snoozeUntil", 64)
	if err := o.errs.err(); err != nil {
		return time.Time{}, err
	}
	if v == "" {
		return time.Time{}, invalid("snoozeUntil", "is required", nil)
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	switch {
	case err != nil:
		return t, invalid("snoozeUntil", "must be an ISO 8601 date and time with a zone (2031-03-14T15:09:26Z)", v)
	case t.Before(now.Add(minSnooze)):
		return t, invalid("snoozeUntil", "must be at least 60 seconds in the future", v)
	case t.After(now.Add(maxSnooze)):
		return t, invalid("snoozeUntil", "must be at most 90 days in the future", v)
	}
	return t.Truncate(time.Millisecond), nil
}

// inboxAction serves PATCH …/{notificationId}/actions/{actionType}/complete|revert.
func (s *Server) inboxAction(done bool) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		nid, err := pathNotificationID(r)
		if err != nil {
			return err
		}
		button, err := actionType(r)
		if err != nil {
			return err
		}
		sub, err := s.inboxSubscriber(r)
		if err != nil {
			return err
		}
		scope := callerFrom(r.Context()).Scope
		m, err := s.store.InboxCompleteAction(r.Context(), &store.InboxActionParams{Scope: scope, SubscriberID: sub.ID, MessageID: nid,
			Button: button, Done: done, Now: s.now()})
		if errors.Is(err, store.ErrNoAction) {
			return errorf(http.StatusBadRequest, "Could not perform action on the "+button+" button because it does not exist.")
		}
		if err != nil {
			return notificationNotFound(err, nid)
		}
		return s.writeNotification(w, r, scope, sub, m)
	}
}

// actionType is the button an action route names: in the path (v2) or,
// for the inbox clients, the body's actionType.
func actionType(r *http.Request) (string, error) {
	button := r.PathValue("actionType")
	if callerFrom(r.Context()).Subscriber != nil {
		o, err := readObject(r)
		if err != nil {
			return "", err
		}
		button = o.requiredText("actionType", 16)
		if err := o.errs.err(); err != nil {
			return "", err
		}
	}
	if button != "primary" && button != "secondary" {
		return "", invalid("actionType", "must be primary or secondary", button)
	}
	return button, nil
}

// inboxDelete serves DELETE …/notifications/{notificationId}: 204.
func (s *Server) inboxDelete(w http.ResponseWriter, r *http.Request) error {
	nid, err := pathNotificationID(r)
	if err != nil {
		return err
	}
	sub, err := s.inboxSubscriber(r)
	if err != nil {
		return err
	}
	now := s.now()
	r = s.watchChange(r, inboxEvents[store.InboxDelete], store.WebhookMessagesChangedParams{IDs: []string{nid}}, now)
	_, err = s.store.InboxChangeOne(r.Context(), &store.InboxChangeParams{Scope: callerFrom(r.Context()).Scope,
		SubscriberID: sub.ID, Action: store.InboxDelete, ID: nid, Now: now})
	if err != nil {
		return notificationNotFound(err, nid)
	}
	writeNoContent(w)
	return nil
}

func writeNoContent(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusNoContent)
}

// inboxBulk serves the bulk changes (POST …/notifications/seen, read,
// archive, read-archive, delete): the action on every notification of the
// subscriber that the body's filter selects and that it would change.
func (s *Server) inboxBulk(action string, only store.InboxFilter, ids bool) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		f, list, err := readBulkBody(r, ids)
		withSessionContext(r, &f)
		if err != nil {
			return err
		}
		f.Read, f.Seen, f.Archived = only.Read, only.Seen, only.Archived
		sub, err := s.inboxSubscriber(r)
		if err != nil {
			return err
		}
		now := s.now()
		r = s.watchChange(r, inboxEvents[action], store.WebhookMessagesChangedParams{SubscriberID: sub.ID, IDs: list}, now)
		_, err = s.store.InboxChangeMany(r.Context(), &store.InboxChangeParams{Scope: callerFrom(r.Context()).Scope,
			SubscriberID: sub.ID, Action: action, IDs: list, Filter: f, Now: now})
		if err != nil {
			return err
		}
		writeNoContent(w)
		return nil
	}
}

// The states the bulk routes act on: seen acts on unseen notifications,
// read on unread ones, archive on those not archived, read-archive on read
// ones not archived; delete on all.
var (
	bulkSeen        = store.InboxFilter{Seen: new(bool)}
	bulkRead        = store.InboxFilter{Read: new(bool)}
	bulkArchive     = store.InboxFilter{Archived: new(bool)}
	bulkReadArchive = store.InboxFilter{Read: func() *bool { b := true; return &b }(), Archived: new(bool)}
)
