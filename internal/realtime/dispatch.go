package realtime

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/wire"
)

// Source is what the dispatcher reads from the store.
type Source interface {
	store.Realtime
	InboxCount(ctx context.Context, p *store.InboxCountParams) ([]int, error)
	WorkflowGet(ctx context.Context, scope store.Scope, idOrKey string) (store.Workflow, error)
	EnvironmentGetByID(ctx context.Context, id string) (store.Environment, error)
}

// Dispatcher turns committed inbox changes (from this process's store
// hook or, on PostgreSQL, from other processes' NOTIFYs) into events for
// the hub's sockets. Changes queue without blocking the committer; one
// goroutine reads, in order, the new messages and the fresh counts of the
// subscribers that have a socket here — others cost nothing.
type Dispatcher struct {
	hub *Hub
	src Source
	log *slog.Logger
	now func() time.Time

	mu      sync.Mutex
	queue   []store.InboxChange
	wake    chan struct{}
	closing chan struct{} // closed by Close: sockets and streams end
	close   sync.Once
	onEvent func(store.InboxChange) // tests: after a change's events are published
}

// NewDispatcher returns a dispatcher feeding hub from src.
func NewDispatcher(hub *Hub, src Source, log *slog.Logger) *Dispatcher {
	if log == nil {
		log = slog.Default()
	}
	return &Dispatcher{hub: hub, src: src, log: log, now: time.Now, wake: make(chan struct{}, 1), closing: make(chan struct{})}
}

// Close ends every socket and event stream (at shutdown: the server
// waits for in-flight requests, which those would never end).
func (d *Dispatcher) Close() { d.close.Do(func() { close(d.closing) }) }

// Hub is the dispatcher's hub.
func (d *Dispatcher) Hub() *Hub { return d.hub }

// Changed queues a committed change; it never blocks.
func (d *Dispatcher) Changed(c store.InboxChange) {
	if !d.anyConnected(c) {
		return
	}
	d.mu.Lock()
	d.queue = append(d.queue, c)
	d.mu.Unlock()
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

func (d *Dispatcher) anyConnected(c store.InboxChange) bool {
	if len(c.SubscriberIDs) == 0 && len(c.MessageIDs) > 0 {
		return d.hub.Sockets() > 0 // new messages alone (a large change split into NOTIFYs): whose, the messages say
	}
	for _, s := range c.SubscriberIDs {
		if d.hub.Connected(c.EnvironmentID, s) {
			return true
		}
	}
	return false
}

// Run dispatches until ctx ends.
func (d *Dispatcher) Run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-d.wake:
		}
		d.mu.Lock()
		batch := d.queue
		d.queue = nil
		d.mu.Unlock()
		for _, c := range batch {
			d.dispatch(ctx, c)
		}
	}
}

// unreadCounts are the filters of the counts events: unread in all and by
// severity (store.UnreadFilters), then unseen.
var unreadCounts = func() []store.InboxFilter {
	no := false
	return append(store.UnreadFilters(), store.InboxFilter{Seen: &no, Archived: &no, Snoozed: &no})
}()

func (d *Dispatcher) dispatch(ctx context.Context, c store.InboxChange) {
	defer func() {
		if p := recover(); p != nil {
			d.log.Error("recovered from a panic", "in", "realtime dispatch", "panic", p)
		}
	}()
	subscribers := c.SubscriberIDs
	if len(subscribers) == 0 && len(c.MessageIDs) > 0 {
		msgs, err := d.src.InboxMessagesByID(ctx, c.EnvironmentID, c.MessageIDs)
		if err != nil {
			d.log.Warn("realtime: messages", "environmentId", c.EnvironmentID, "err", err)
			return
		}
		for _, m := range msgs {
			if !slices.Contains(subscribers, m.SubscriberID) {
				subscribers = append(subscribers, m.SubscriberID)
			}
		}
	}
	var subs []string
	for _, s := range subscribers {
		if d.hub.Connected(c.EnvironmentID, s) {
			subs = append(subs, s)
		}
	}
	if len(subs) == 0 {
		return
	}
	env, err := d.src.EnvironmentGetByID(ctx, c.EnvironmentID)
	if err != nil {
		d.log.Warn("realtime: environment", "environmentId", c.EnvironmentID, "err", err)
		return
	}
	scope := store.Scope{OrganizationID: env.OrganizationID, EnvironmentID: env.ID}
	received := map[string][]Event{}
	if len(c.MessageIDs) > 0 {
		received = d.newMessages(ctx, scope, subs, c.MessageIDs)
	}
	for _, s := range subs {
		n, err := d.src.InboxCount(ctx, &store.InboxCountParams{Scope: scope, SubscriberID: s, Filters: unreadCounts, Now: d.now()})
		if err != nil {
			d.log.Warn("realtime: counts", "environmentId", c.EnvironmentID, "err", err)
			continue
		}
		events := append(received[s], countEvents(n)...)
		d.hub.Publish(c.EnvironmentID, s, events...)
	}
	if d.onEvent != nil {
		d.onEvent(c)
	}
}

// countEvents are the unseen and unread events of InboxCount's answer to unreadCounts.
func countEvents(n []int) []Event {
	unseen, _ := json.Marshal(map[string]int{"unseenCount": n[5]})
	// n[1:5] follows store.Severities: none, low, medium, high.
	unread, _ := json.Marshal(map[string]any{"counts": map[string]any{"total": n[0],
		"severity": map[string]int{"high": n[4], "medium": n[3], "low": n[2], "none": n[1]}}})
	return []Event{{Name: EventUnseenCountChanged, Data: unseen}, {Name: EventUnreadCountChanged, Data: unread}}
}

// receivedEvent is the payload of notification_received: the new message
// in the stored-message shape (OpenAPI NotificationReceivedEvent;
// docs/api-behaviour.md, "Realtime").
type receivedEvent struct {
	Message wire.Received `json:"message"`
}

// newMessages are the notification_received events of the connected
// subscribers, by subscriber, oldest first.
func (d *Dispatcher) newMessages(ctx context.Context, scope store.Scope, subs, ids []string) map[string][]Event {
	out := map[string][]Event{}
	msgs, err := d.src.InboxMessagesByID(ctx, scope.EnvironmentID, ids)
	if err != nil {
		d.log.Warn("realtime: messages", "environmentId", scope.EnvironmentID, "err", err)
		return out
	}
	msgs = slices.DeleteFunc(msgs, func(m store.Message) bool { return !slices.Contains(subs, m.SubscriberID) })
	if len(msgs) == 0 {
		return out
	}
	slices.SortFunc(msgs, func(a, b store.Message) int { return a.CreatedAt.Compare(b.CreatedAt) })
	byID, err := d.src.SubscribersByID(ctx, scope.EnvironmentID, subs)
	if err != nil {
		d.log.Warn("realtime: subscribers", "environmentId", scope.EnvironmentID, "err", err)
		return out
	}
	workflows := map[string]*wire.Workflow{}
	for i := range msgs {
		m := &msgs[i]
		wf, seen := workflows[m.WorkflowID]
		if !seen && m.WorkflowID != "" {
			if w, err := d.src.WorkflowGet(ctx, scope, m.WorkflowID); err == nil {
				o := wire.WorkflowOf(w)
				wf = &o
			}
			workflows[m.WorkflowID] = wf
		}
		sub := byID[m.SubscriberID]
		data, err := json.Marshal(receivedEvent{Message: wire.ReceivedOf(m, &sub, wf)})
		if err != nil {
			continue
		}
		out[m.SubscriberID] = append(out[m.SubscriberID], Event{Name: EventNotificationReceived, Data: data})
	}
	return out
}

// Listen feeds the dispatcher with other processes' changes through
// listen (the store's ListenInbox), reconnecting after a failure, until
// ctx ends.
func (d *Dispatcher) Listen(ctx context.Context, listen func(context.Context, func(store.InboxChange)) error) {
	backoff := time.Second
	for ctx.Err() == nil {
		if err := listen(ctx, d.Changed); err != nil && ctx.Err() == nil {
			d.log.Warn("realtime: listening for other processes' inbox changes", "err", err, "retryIn", backoff)
			select {
			case <-ctx.Done():
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 5*time.Second) // a database back on the network is heard from again within seconds
			continue
		}
		backoff = time.Second
	}
}
