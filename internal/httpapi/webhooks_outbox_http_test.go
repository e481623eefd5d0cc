package httpapi_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/engine"
	"github.com/herald-notify/herald/internal/httpapi"
	"github.com/herald-notify/herald/internal/sandbox"
	"github.com/herald-notify/herald/internal/webhooks"
)

// TestWebhookOutboxOutlivesItsWriter: the events of a change are written in
// the change's own transaction, as outbox entries, so a process that dies
// right after the commit loses none. The process that makes the changes
// here never drains its outbox (it "dies" after each answer): when it is
// gone, nothing but the entries holds the events — no event is stored yet.
// Another process's service (a restart, or a replica) then makes every
// event of them, once, and sends it.
func TestWebhookOutboxOutlivesItsWriter(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		log := testLogger(t)
		writer := webhooks.New(webhooks.Options{Store: h.DB, Logger: log, AllowPrivateNetworks: true})
		writer.Outbox(h.DB) // as herald serve wires it, but neither its drain nor its sender runs
		h.Handler = httpapi.New(httpapi.Options{Store: h.DB, Keys: h.Keys, Logger: log, Metrics: h.Metrics, Webhooks: writer,
			OnTrigger: func() { h.Wakes.Add(1) }})
		h.DB.SetTriggerPlanner(engine.InAppPlanner(sandbox.New(sandbox.DefaultLimits), h.DB))
		dev := h.authFor(asDev)
		sink := newEventSink(t)
		e := h.createWebhookEndpoint(t, dev, map[string]any{"url": sink.URL + "/events"})
		sink.secret = e["secret"].(string)

		// Changes of every kind: a workflow, an in-app message created
		// with its trigger, inbox changes, a preference.
		h.createWorkflow(t, dev, map[string]any{"name": "Kept", "workflowId": "kept", "steps": stepsOf("in_app")})
		h.createSubscriber(t, dev, map[string]any{"subscriberId": "ada", "firstName": "Ada"})
		h.trigger(t, dev, map[string]any{"name": "kept", "to": "ada", "transactionId": "tx-kept"})
		items := h.feedItems(t, "ada")
		require.Len(t, items, 1)
		mid := items[0]["_id"].(string)
		for _, mark := range []string{"read", "unread"} {
			res := h.call(t, dev, "POST", "/v1/subscribers/ada/messages/mark-as", map[string]any{"messageId": mid, "markAs": mark}, nil)
			require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
		}
		res := h.call(t, dev, "PATCH", prefsPath("ada", ""), map[string]any{"channels": map[string]any{"email": false}}, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)

		count := func(table string) int {
			var n int
			require.NoError(t, h.DB.Reader().QueryRowContext(t.Context(), "SELECT count(*) FROM "+table).Scan(&n))
			return n
		}
		require.Zero(t, count("webhook_events"), "no event was made by the writer")
		require.Positive(t, count("webhook_outbox"), "the entries written with the changes")

		// Another process: its drain and sender.
		other := webhooks.New(webhooks.Options{Store: h.DB, Logger: log, AllowPrivateNetworks: true, Schedule: []time.Duration{0},
			Poll: 20 * time.Millisecond})
		runWebhooks(t, other)

		sink.find("workflow.created", "workflowId", "kept")
		sent := sink.find("message.sent", "_id", mid)["object"].(map[string]any)
		require.Equal(t, "ada", sent["subscriberId"])
		sink.find("message.delivered", "_id", mid)
		read := sink.find("message.read", "_id", mid)["object"].(map[string]any)
		require.Equal(t, true, read["read"], "the message as the change left it, not as it is now")
		unread := sink.find("message.unread", "_id", mid)["object"].(map[string]any)
		require.Equal(t, false, unread["read"])
		pref := sink.find("preference.updated", "level", "global")
		require.Equal(t, false, pref["object"].(map[string]any)["channels"].(map[string]any)["email"])
		require.Eventually(t, func() bool { return count("webhook_outbox") == 0 }, 10*time.Second, 10*time.Millisecond)

		// Once each, however many drains ran.
		require.NoError(t, other.Drain(t.Context()))
		require.NoError(t, writer.Drain(t.Context()))
		time.Sleep(100 * time.Millisecond)
		for _, typ := range []string{"message.sent", "message.delivered", "message.read", "message.unread"} {
			require.Equal(t, 1, sink.count(typ, "_id", mid), typ)
		}
		require.Equal(t, 1, sink.count("workflow.created", "workflowId", "kept"))
		require.Equal(t, 1, sink.count("preference.updated", "level", "global"))
	})
}
