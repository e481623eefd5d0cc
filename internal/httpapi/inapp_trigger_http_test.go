package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/engine"
	"github.com/herald-notify/herald/internal/sandbox"
)

// A workflow that starts with an in-app step runs that step with the
// trigger (engine.InAppPlanner, as herald serve sets it): the message is in the feed when the trigger
// is acknowledged, with no worker running, and the job's history is the one
// a worker writes. Recipients the trigger creates or updates are left to
// the workers.
func TestInAppStepRunsWithTheTrigger(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		h.DB.SetTriggerPlanner(engine.InAppPlanner(sandbox.New(sandbox.DefaultLimits), h.DB))
		dev := h.authFor(asDev)
		h.createWorkflow(t, dev, map[string]any{"name": "Inbox", "workflowId": "inbox", "steps": stepsOf("in_app")})
		h.createWorkflow(t, dev, map[string]any{"name": "Inbox then mail", "workflowId": "inbox-mail",
			"steps": stepsOf("in_app", "email")})
		for _, sid := range []string{"ada", "bob"} {
			res := h.call(t, dev, "POST", "/v2/subscribers", map[string]any{"subscriberId": sid, "firstName": sid,
				"email": sid + "@example.com"}, nil)
			require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
		}
		res := h.call(t, dev, "PATCH", prefsPath("bob", ""), map[string]any{"channels": map[string]any{"in_app": false}}, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)

		// No engine has run: the message is there at once, rendered.
		h.trigger(t, dev, map[string]any{"name": "inbox", "to": "ada", "transactionId": "tx-ada"})
		items := h.feedItems(t, "ada")
		require.Len(t, items, 1)
		require.Equal(t, "Hello ada", items[0]["content"])
		job := h.onlyJob(t, "tx-ada")
		require.Equal(t, "completed", job["status"])
		require.Equal(t, []detailSummary{{"Pending", "Internal"}, {"Success", "Internal"}}, jobDetails(t, job))
		require.Zero(t, h.Wakes.Load(), "nothing left for the workers: they are not woken")
		unseen := h.call(t, dev, "GET", "/v1/subscribers/ada/notifications/unseen", nil, nil)
		require.Equal(t, http.StatusOK, unseen.Status, "%s", unseen.Raw)
		require.EqualValues(t, 1, unseen.Object(t)["count"])

		// Preferences apply at trigger time as they do in a worker.
		h.trigger(t, dev, map[string]any{"name": "inbox", "to": "bob", "transactionId": "tx-bob"})
		require.Empty(t, h.feedItems(t, "bob"))
		job = h.onlyJob(t, "tx-bob")
		require.Equal(t, "skipped", job["status"])
		require.Zero(t, h.Wakes.Load())

		// The step after the in-app one is queued for the workers.
		h.trigger(t, dev, map[string]any{"name": "inbox-mail", "to": "ada", "transactionId": "tx-two"})
		require.Len(t, h.feedItems(t, "ada"), 2)
		require.Equal(t, 1, h.count(t, "SELECT count(*) FROM jobs WHERE transaction_id = 'tx-two' AND status = 'queued' AND type = 'email'"))
		require.Equal(t, 1, h.count(t, "SELECT count(*) FROM jobs WHERE transaction_id = 'tx-two' AND status = 'completed' AND type = 'in_app'"))
		require.EqualValues(t, 1, h.Wakes.Load(), "a queued step wakes the workers")

		// A recipient the trigger creates (or updates) waits for a worker,
		// which renders it with the trigger's data.
		h.trigger(t, dev, map[string]any{"name": "inbox", "to": map[string]any{"subscriberId": "cy", "firstName": "Cy"},
			"transactionId": "tx-cy"})
		require.Empty(t, h.feedItems(t, "cy"))
		require.Equal(t, "queued", h.onlyJob(t, "tx-cy")["status"])
		require.EqualValues(t, 2, h.Wakes.Load())
		h.trigger(t, dev, map[string]any{"name": "inbox", "to": map[string]any{"subscriberId": "ada", "firstName": "Ada"},
			"transactionId": "tx-ada-renamed"})
		require.Equal(t, "queued", h.onlyJob(t, "tx-ada-renamed")["status"])
		eng := h.newEngine(engine.Options{Batch: 8})
		drain(t, eng)
		cy := h.feedItems(t, "cy")
		require.Len(t, cy, 1)
		require.Equal(t, "Hello Cy", cy[0]["content"])
		require.Equal(t, "Hello Ada", h.feedItems(t, "ada")[0]["content"])

		// A duplicate transactionId writes nothing, planned step included.
		dup := h.call(t, dev, "POST", "/v1/events/trigger", map[string]any{"name": "inbox", "to": "ada", "transactionId": "tx-ada"}, nil)
		require.Equal(t, http.StatusConflict, dup.Status, "%s", dup.Raw)
		require.Len(t, h.feedItems(t, "ada"), 3)
	})
}
