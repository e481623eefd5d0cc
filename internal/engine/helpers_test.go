package engine_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/app"
	"github.com/herald-notify/herald/internal/engine"
	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/sandbox"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/store/sqlstore"
	"github.com/herald-notify/herald/internal/testdb"
)

// clock is a controllable clock shared by a world's engines and its own
// store calls.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *clock) Advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// world is a store with a first-start environment, a controllable clock and an engine.
type world struct {
	t     *testing.T
	db    *sqlstore.DB
	clock *clock
	eng   *engine.Engine
	scope store.Scope
	// atTrigger places the events of a workflow starting with a digest in
	// the trigger's transaction, as the HTTP API does; otherwise workers do.
	atTrigger bool
}

func newWorld(t *testing.T, db *sqlstore.DB) *world {
	a := &app.App{Store: db, Keys: testdb.Keys(t)}
	_, err := a.Bootstrap(context.Background())
	require.NoError(t, err)
	env, err := db.EnvironmentGetByName(context.Background(), "development")
	require.NoError(t, err)
	c := &clock{t: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)}
	w := &world{t: t, db: db, clock: c, scope: store.Scope{OrganizationID: env.OrganizationID, EnvironmentID: env.ID}}
	w.eng = w.engine()
	return w
}

func (w *world) engine() *engine.Engine {
	return engine.New(engine.Options{Store: w.db, Now: w.clock.Now, Lease: time.Minute})
}

// workflow creates a workflow with the given steps (name, type, controls).
func (w *world) workflow(key string, steps ...store.Step) store.Workflow {
	now := w.clock.Now()
	for i := range steps {
		steps[i].ID = id.New()
		if steps[i].StepID == "" {
			steps[i].StepID = steps[i].Type
		}
		if steps[i].Name == "" {
			steps[i].Name = steps[i].Type
		}
	}
	wf := store.Workflow{ID: id.New(), OrganizationID: w.scope.OrganizationID, EnvironmentID: w.scope.EnvironmentID,
		Key: key, Name: key, Active: true, Severity: "none", Steps: steps, CreatedAt: now, UpdatedAt: now}
	require.NoError(w.t, w.db.WorkflowCreate(context.Background(), &wf))
	return wf
}

func inApp(body string) store.Step {
	return store.Step{Type: "in_app", ControlValues: map[string]any{"body": body}}
}

// trigger triggers wf for one subscriber with a payload.
func (w *world) trigger(wf store.Workflow, subscriberID string, payload map[string]any) store.Notification {
	p, err := json.Marshal(payload)
	require.NoError(w.t, err)
	params := &store.TriggerParams{
		Scope: w.scope, Workflow: wf, TransactionID: id.New(), Payload: p, Now: w.clock.Now(),
		Recipients:  []store.Recipient{{SubscriberID: subscriberID}},
		ProviderFor: func(string) string { return "svc" },
	}
	if w.atTrigger {
		require.NoError(w.t, engine.PlanDigests(context.Background(), sandbox.New(sandbox.DefaultLimits), w.db, params))
	}
	res, err := w.db.Trigger(context.Background(), params)
	require.NoError(w.t, err)
	require.Len(w.t, res.Notifications, 1)
	return res.Notifications[0]
}

// eachPlacement runs a digest test on both stores, with events placed by
// workers and by the trigger itself.
func eachPlacement(t *testing.T, f func(t *testing.T, w *world)) {
	for _, kind := range testdb.Kinds {
		for _, atTrigger := range []bool{false, true} {
			name := kind + "/worker"
			if atTrigger {
				name = kind + "/trigger"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				w := newWorld(t, testdb.Open(t, kind))
				w.atTrigger = atTrigger
				f(t, w)
			})
		}
	}
}

// drain runs the engine until nothing moves.
func (w *world) drain() {
	for range 1000 {
		n, err := w.eng.RunOnce(context.Background())
		require.NoError(w.t, err)
		if n == 0 {
			return
		}
	}
	w.t.Fatal("the engine never settled")
}

// feed returns the contents of a subscriber's inbox, newest first.
func (w *world) feed(subscriberID string) []string {
	sub, err := w.db.SubscriberGet(context.Background(), w.scope, subscriberID)
	if err != nil {
		return nil
	}
	page, err := w.db.MessageFeed(context.Background(), &store.FeedParams{Scope: w.scope, SubscriberID: sub.ID, Limit: 100,
		Now: w.clock.Now()})
	require.NoError(w.t, err)
	out := []string{}
	for _, m := range page.Messages {
		out = append(out, m.Content)
	}
	return out
}

// jobs returns the statuses of a notification's jobs in step order.
func (w *world) jobs(n store.Notification) []string {
	d, err := w.db.NotificationGet(context.Background(), w.scope, n.ID)
	require.NoError(w.t, err)
	out := []string{}
	for _, j := range d.Jobs {
		out = append(out, j.Type+":"+j.Status)
	}
	return out
}

// details returns the texts of a notification's execution details of one job type.
func (w *world) details(n store.Notification, jobType string) []string {
	d, err := w.db.NotificationGet(context.Background(), w.scope, n.ID)
	require.NoError(w.t, err)
	var out []string
	for _, j := range d.Jobs {
		if j.Type == jobType {
			for _, ed := range d.Details[j.ID] {
				out = append(out, ed.Status+" "+ed.Source+": "+ed.Detail)
			}
		}
	}
	return out
}
