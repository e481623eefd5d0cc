package httpapi_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/app"
	"github.com/herald-notify/herald/internal/engine"
	"github.com/herald-notify/herald/internal/realtime"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/store/sqlstore"
	"github.com/herald-notify/herald/internal/testdb"
)

// TestRealtimeAcrossProcesses: two stores on one PostgreSQL database stand
// for an API replica holding the socket and a worker replica delivering
// the message; the worker's commit reaches the API's socket through
// NOTIFY herald_inbox and the API's LISTEN.
func TestRealtimeAcrossProcesses(t *testing.T) {
	t.Parallel()
	u := testdb.NewPostgresSchema(t)
	keys := testdb.Keys(t)
	open := func() *sqlstore.DB {
		db, err := sqlstore.OpenPostgres(context.Background(), u, keys)
		require.NoError(t, err)
		t.Cleanup(func() { db.Close() })
		return db
	}
	apiDB, workerDB := open(), open()
	a := &app.App{Store: apiDB, Keys: keys}
	first, err := a.Bootstrap(context.Background())
	require.NoError(t, err)
	h := &harness{t: t, DB: apiDB, Keys: keys, App: a, DevKey: first.Keys["development"], ProdKey: first.Keys["production"]}
	srv := withRealtime(t, h) // the API: hub, hook and LISTEN
	var workerChanges []store.InboxChange
	workerDB.OnInboxChange(func(c store.InboxChange) { workerChanges = append(workerChanges, c) }) // the worker: NOTIFY only

	dev := h.authFor(asDev)
	session := h.openSession(t, h.identifierOf(t, dev), h.DevKey, map[string]any{"subscriberId": "px-1"})
	sock := dialSocket(t, srv, session["token"].(string))
	sub := h.subscriber(t, dev, "px-1")

	// Wait until the API listens: NOTIFY a change of the subscriber (as a
	// third process would) until its socket hears of it.
	probe, err := sql.Open("pgx", u)
	require.NoError(t, err)
	defer probe.Close()
	envID := h.envID(t, "development")
	note, _ := json.Marshal(map[string]any{"o": "probe", "e": envID, "s": []string{sub["_id"].(string)}})
	heard := make(chan struct{})
	go func() {
		for {
			select {
			case <-heard:
				return
			case <-time.After(20 * time.Millisecond):
				probe.Exec("SELECT pg_notify('herald_inbox', $1)", string(note)) //nolint:errcheck
			}
		}
	}()
	require.Equal(t, realtime.EventUnseenCountChanged, sock.next().Name)
	close(heard)

	h.createWorkflow(t, dev, map[string]any{"name": "px-flow", "workflowId": "px-flow",
		"steps": []any{map[string]any{"name": "Inbox", "type": "in_app", "controlValues": map[string]any{"body": "From the worker"}}}})
	h.trigger(t, dev, map[string]any{"name": "px-flow", "to": "px-1", "transactionId": "px-tx"})
	worker := engine.New(engine.Options{Store: workerDB, Logger: slog.New(slog.DiscardHandler)})
	drain(t, worker)
	require.Len(t, workerChanges, 1, "the worker's own hook saw its commit")
	require.Len(t, workerChanges[0].MessageIDs, 1)

	var got event
	for got = sock.next(); got.Name != realtime.EventNotificationReceived; got = sock.next() {
		require.Contains(t, countEvents, got.Name) // a late probe's
	}
	m := got.Data["message"].(map[string]any)
	require.Equal(t, workerChanges[0].MessageIDs[0], m["_id"])
	require.Equal(t, "From the worker", m["content"])
	counts := sock.expect(countEvents...)
	require.Equal(t, map[string]any{"unseenCount": 1.0}, counts[0].Data)
	require.Equal(t, 1.0, unreadTotal(counts[1]))
}
