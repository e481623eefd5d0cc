package httpapi_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/engine"
)

// TestPreferencesSkipSteps: the engine runs a channel step only when the
// subscriber's preferences leave its channel on; a skipped step says why
// and the workflow goes on.
func TestPreferencesSkipSteps(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		eng := h.newEngine(engine.Options{Batch: 8})
		h.createWorkflow(t, dev, map[string]any{"name": "News", "workflowId": "news", "steps": stepsOf("in_app")})
		h.createWorkflow(t, dev, map[string]any{"name": "Alerts", "workflowId": "alerts", "steps": stepsOf("in_app"),
			"preferences": criticalPreferences})
		h.createWorkflow(t, dev, map[string]any{"name": "Mail then inbox", "workflowId": "both", "steps": stepsOf("email", "in_app")})
		h.createWorkflow(t, dev, map[string]any{"name": "Quiet", "workflowId": "quiet", "steps": stepsOf("in_app"),
			"preferences": map[string]any{"workflow": map[string]any{"all": map[string]any{"enabled": true, "readOnly": false},
				"channels": map[string]any{"in_app": map[string]any{"enabled": false}}}}})
		set := func(sid string, body map[string]any) {
			t.Helper()
			res := h.call(t, dev, "PATCH", prefsPath(sid, ""), body, nil)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		}
		inAppOff := map[string]any{"channels": map[string]any{"in_app": false}}
		const (
			bySubscriber = "Step skipped: the subscriber's preferences turn the in_app channel off"
			byWorkflow   = "Step skipped: the workflow's preferences turn the in_app channel off"
		)
		type jobWant struct{ status, detail string } // detail: the last execution detail's text ("" to skip)
		for i, tc := range []struct {
			name     string
			workflow string
			prefs    []map[string]any
			jobs     []jobWant
			messages int
		}{
			{name: "in_app turned off globally: no message", workflow: "news", prefs: []map[string]any{inAppOff},
				jobs: []jobWant{{"skipped", bySubscriber}}},
			{name: "in_app turned off for the workflow", workflow: "news",
				prefs: []map[string]any{{"channels": map[string]any{"in_app": false}, "workflowId": "news"}},
				jobs:  []jobWant{{"skipped", bySubscriber}}},
			{name: "workflow-level on beats global off", workflow: "news",
				prefs:    []map[string]any{inAppOff, {"channels": map[string]any{"in_app": true}, "workflowId": "news"}},
				jobs:     []jobWant{{"completed", "In-app message created"}},
				messages: 1},
			{name: "another workflow's choice does not apply", workflow: "news",
				prefs:    []map[string]any{{"channels": map[string]any{"in_app": false}, "workflowId": "both"}},
				jobs:     []jobWant{{"completed", ""}},
				messages: 1},
			{name: "a critical workflow ignores preferences", workflow: "alerts", prefs: []map[string]any{inAppOff},
				jobs: []jobWant{{"completed", ""}}, messages: 1},
			{name: "a skipped step lets the workflow go on", workflow: "both",
				prefs:    []map[string]any{{"channels": map[string]any{"email": false}}},
				jobs:     []jobWant{{"skipped", "Step skipped: the subscriber's preferences turn the email channel off"}, {"completed", ""}},
				messages: 1},
			{name: "the workflow's default off", workflow: "quiet", jobs: []jobWant{{"skipped", byWorkflow}}},
			{name: "the subscriber's global on beats the workflow's default", workflow: "quiet",
				prefs: []map[string]any{{"channels": map[string]any{"in_app": true}}}, jobs: []jobWant{{"completed", ""}}, messages: 1},
		} {
			t.Run(tc.name, func(t *testing.T) {
				sid := fmt.Sprintf("sub-%d", i)
				h.createSubscriber(t, dev, map[string]any{"subscriberId": sid, "firstName": "Ada"})
				for _, p := range tc.prefs {
					set(sid, p)
				}
				tx := "tx-" + sid
				h.trigger(t, dev, map[string]any{"name": tc.workflow, "to": sid, "transactionId": tx})
				drain(t, eng)
				jobs := h.jobsOf(t, tx)
				require.Len(t, jobs, len(tc.jobs))
				for k, want := range tc.jobs {
					require.Equal(t, want.status, jobs[k]["status"], "job %d", k)
					details := objects(t, jobs[k]["executionDetails"])
					if want.detail != "" {
						last := details[len(details)-1]
						require.Equal(t, want.detail, last["detail"])
						require.Equal(t, "Internal", last["source"])
					}
				}
				require.Len(t, h.feedItems(t, sid), tc.messages)
			})
		}

		// Turning the channel on again delivers again.
		set("sub-0", map[string]any{"channels": map[string]any{"in_app": true}})
		h.trigger(t, dev, map[string]any{"name": "news", "to": "sub-0", "transactionId": "tx-again"})
		drain(t, eng)
		require.Equal(t, "completed", h.onlyJob(t, "tx-again")["status"])
		require.Len(t, h.feedItems(t, "sub-0"), 1)
	})
}

// TestPreferencesFanOut: one event to many subscribers, run in batches,
// honours each one's preferences.
func TestPreferencesFanOut(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		h.createWorkflow(t, dev, map[string]any{"name": "News", "workflowId": "news", "steps": stepsOf("in_app")})
		var to []any
		for i := range 30 {
			sid := fmt.Sprintf("fan-%02d", i)
			h.createSubscriber(t, dev, map[string]any{"subscriberId": sid})
			to = append(to, sid)
			switch i % 3 {
			case 1: // off for the workflow
				res := h.call(t, dev, "PATCH", prefsPath(sid, "/bulk"), map[string]any{"preferences": []any{
					map[string]any{"workflowId": "news", "channels": map[string]any{"in_app": false}}}}, nil)
				require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
			case 2: // off globally
				res := h.call(t, dev, "PATCH", prefsPath(sid, ""), map[string]any{"channels": map[string]any{"in_app": false}}, nil)
				require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
			}
		}
		h.trigger(t, dev, map[string]any{"name": "news", "to": to, "transactionId": "tx-fan"})
		require.Equal(t, 30, drain(t, h.newEngine(engine.Options{Batch: 7})))
		for i, sid := range to {
			want := 0
			if i%3 == 0 {
				want = 1
			}
			require.Len(t, h.feedItems(t, sid.(string)), want, "%s", sid)
		}
		require.Equal(t, 20, h.count(t, "SELECT count(*) FROM jobs WHERE transaction_id = 'tx-fan' AND status = 'skipped'"))
	})
}
