package sqlstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/herald-notify/herald/internal/store"
)

// The realtime hook: every write transaction that applies inbox counts
// (applyCounts) notes which subscribers' counts moved and which
// in-app messages it created; after the commit, outside the transaction,
// the store tells the hook, once per environment. On PostgreSQL it also
// sends the ids with pg_notify on inboxChannel, so that the hubs of other
// processes (an API replica beside the worker that delivered) hear of it.

// inboxChannel is the PostgreSQL NOTIFY channel of inbox changes.
const inboxChannel = "herald_inbox"

// maxInboxPayload bounds one NOTIFY's payload (PostgreSQL's limit is 8000 bytes).
const maxInboxPayload = 7000

// txInboxChanges are one transaction's inbox changes, by environment.
type txInboxChanges struct {
	byEnv map[string]*store.InboxChange
	seen  map[string]bool // environment + subscriber
}

// realtimeHook is the DB's part of the hook.
type realtimeHook struct {
	fn     atomic.Pointer[func(store.InboxChange)]
	origin string // this DB's mark on its own NOTIFYs
}

// OnInboxChange sets the function told, after each commit, of the inbox
// changes the transaction made (fn must not block: it runs in the writer's
// goroutine). On PostgreSQL every such change is also sent to the other
// processes, which hear it through ListenInbox.
func (db *DB) OnInboxChange(fn func(store.InboxChange)) {
	if db.realtime.origin == "" {
		b := make([]byte, 8)
		_, _ = rand.Read(b)
		db.realtime.origin = hex.EncodeToString(b)
	}
	db.realtime.fn.Store(&fn)
}

// noteInboxChanges records what counts p applied on q, if q is a tracked
// transaction.
func noteInboxChanges(q querier, p *pendingCounts) {
	if n := tracked(q); n != nil {
		n.inbox.note(p)
	}
}

// note records the inbox changes of counts p.
func (ch *txInboxChanges) note(p *pendingCounts) {
	if ch.byEnv == nil {
		ch.byEnv, ch.seen = map[string]*store.InboxChange{}, map[string]bool{}
	}
	change := func(env string) *store.InboxChange {
		c := ch.byEnv[env]
		if c == nil {
			c = &store.InboxChange{EnvironmentID: env}
			ch.byEnv[env] = c
		}
		return c
	}
	for sub, env := range p.env {
		if !moved(p.deltas[sub]) {
			continue // touched, but no message changed state
		}
		if k := env + "\x00" + sub; !ch.seen[k] {
			ch.seen[k] = true
			c := change(env)
			c.SubscriberIDs = append(c.SubscriberIDs, sub)
		}
	}
	for _, m := range p.added {
		c := change(m.env)
		c.MessageIDs = append(c.MessageIDs, m.id)
	}
}

// moved reports whether a subscriber's count change is not nothing.
func moved(d countDelta) bool {
	for _, n := range d {
		if n != 0 {
			return true
		}
	}
	return false
}

func (db *DB) inboxCommitted(ch *txInboxChanges) {
	fn := db.realtime.fn.Load()
	if fn == nil {
		return // tracked for the outbox only
	}
	changes := make([]store.InboxChange, 0, len(ch.byEnv))
	for _, c := range ch.byEnv {
		slices.Sort(c.SubscriberIDs)
		changes = append(changes, *c)
		(*fn)(*c)
	}
	if db.d.notifies {
		go db.notifyInbox(changes)
	}
}

// inboxNote is a NOTIFY payload: ids only.
type inboxNote struct {
	Origin        string   `json:"o"`
	EnvironmentID string   `json:"e"`
	SubscriberIDs []string `json:"s,omitempty"`
	MessageIDs    []string `json:"m,omitempty"`
}

// inboxNotes splits changes into payloads under maxInboxPayload bytes.
func inboxNotes(origin string, changes []store.InboxChange) []string {
	var out []string
	for _, c := range changes {
		n := inboxNote{Origin: origin, EnvironmentID: c.EnvironmentID}
		size := func() int { return 64 + len(c.EnvironmentID) + 27*(len(n.SubscriberIDs)+len(n.MessageIDs)) }
		flush := func() {
			b, _ := json.Marshal(n)
			out = append(out, string(b))
			n.SubscriberIDs, n.MessageIDs = nil, nil
		}
		for _, s := range c.SubscriberIDs {
			if size()+len(s) > maxInboxPayload {
				flush()
			}
			n.SubscriberIDs = append(n.SubscriberIDs, s)
		}
		for _, m := range c.MessageIDs {
			if size()+len(m) > maxInboxPayload {
				flush()
			}
			n.MessageIDs = append(n.MessageIDs, m)
		}
		flush()
	}
	return out
}

// notifyInbox sends changes to the other processes. A lost one loses those
// events: the clients refetch on reconnection and on their next action.
func (db *DB) notifyInbox(changes []store.InboxChange) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, p := range inboxNotes(db.realtime.origin, changes) {
		db.w.ExecContext(ctx, "SELECT pg_notify('"+inboxChannel+"', $1)", p) //nolint:errcheck // see above
	}
}

// ListenInbox calls fn with the inbox changes other processes commit, until
// ctx ends or the connection fails. On SQLite, where one process owns the
// database, it just waits for ctx.
func (db *DB) ListenInbox(ctx context.Context, fn func(store.InboxChange)) error {
	return db.d.listen(ctx, db.url, inboxChannel, func(payload string) {
		var note inboxNote
		if json.Unmarshal([]byte(payload), &note) != nil || note.Origin == db.realtime.origin {
			return
		}
		fn(store.InboxChange{EnvironmentID: note.EnvironmentID, SubscriberIDs: note.SubscriberIDs, MessageIDs: note.MessageIDs})
	})
}

// InboxMessagesByID implements store.Realtime.
func (db *DB) InboxMessagesByID(ctx context.Context, environmentID string, ids []string) ([]store.Message, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	a := args{environmentID}
	rows, err := db.r.QueryContext(ctx, "SELECT "+messageCols+" FROM messages WHERE environment_id = $1 AND "+
		db.inList(&a, "id", ids)+" AND channel = 'in_app' AND deleted = false", a...)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: messages by id: %w", err)
	}
	return scanAll(rows, nil, scanMessage)
}

// SubscribersByID implements store.Realtime.
func (db *DB) SubscribersByID(ctx context.Context, environmentID string, ids []string) (map[string]store.Subscriber, error) {
	out := map[string]store.Subscriber{}
	if len(ids) == 0 {
		return out, nil
	}
	a := args{environmentID}
	rows, err := db.r.QueryContext(ctx, "SELECT "+subscriberCols+" FROM subscribers WHERE environment_id = $1 AND "+
		db.inList(&a, "id", ids)+" AND deleted = false", a...)
	if err := eachRow(rows, err, func(r rowScanner) error {
		s, err := scanSubscriber(r)
		if err == nil {
			out[s.ID] = s
		}
		return err
	}); err != nil {
		return nil, fmt.Errorf("sqlstore: subscribers by id: %w", err)
	}
	return out, nil
}
