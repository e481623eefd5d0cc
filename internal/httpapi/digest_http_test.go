package httpapi_test

import (
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/engine"
)

// TestDigestPlacedAtTrigger: the events of a workflow that starts with a
// digest are placed by the trigger itself. Before any worker runs, each
// subscriber's first event leads a window (delayed) and the others — a
// subscriber named twice in one trigger included — are merged into it, their
// in-app step skipped; when the window closes, one message per subscriber
// counts all its events.
func TestDigestPlacedAtTrigger(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		h.createWorkflow(t, dev, map[string]any{"name": "Batched", "workflowId": "batched", "active": true, "steps": []any{
			map[string]any{"name": "Batch", "type": "digest", "controlValues": map[string]any{"amount": 1, "unit": "seconds"}},
			map[string]any{"name": "Inbox", "type": "in_app", "controlValues": map[string]any{"body": "{{step.total_count}} events"}},
		}})
		h.trigger(t, dev, map[string]any{"name": "batched", "to": []any{"d1", "d2", "d1"}, "payload": map[string]any{"n": 1}})
		h.trigger(t, dev, map[string]any{"name": "batched", "to": "d1", "payload": map[string]any{"n": 2}})

		var placed []string
		leaders := map[string]string{}
		merged := map[string]string{}
		for _, n := range objects(t, h.events(t, url.Values{"subscriberIds": {"d1", "d2"}})["data"]) {
			ev := h.event(t, n["_id"].(string))
			jobs := objects(t, ev["jobs"])
			require.Len(t, jobs, 2)
			placed = append(placed, jobs[0]["status"].(string)+">"+jobs[1]["status"].(string))
			require.Equal(t, []detailSummary{{"Success", "Internal"}}, jobDetails(t, jobs[0]), "one detail: the placement")
			sub := ev["subscriber"].(map[string]any)["subscriberId"].(string)
			switch jobs[0]["status"] {
			case "delayed":
				leaders[sub] = ev["_id"].(string)
				require.Equal(t, []detailSummary{{"Pending", "Internal"}}, jobDetails(t, jobs[1]))
			case "merged":
				merged[ev["_id"].(string)] = ev["_digestedNotificationId"].(string)
				require.Empty(t, jobDetails(t, jobs[1]), "a merged event's later steps never queued")
			}
		}
		sort.Strings(placed)
		require.Equal(t, []string{"delayed>pending", "delayed>pending", "merged>skipped", "merged>skipped"}, placed)
		for _, leader := range merged {
			require.Equal(t, leaders["d1"], leader, "d1's events merge into its first")
		}

		eng := h.newEngine(engine.Options{})
		drain(t, eng)
		require.Empty(t, h.feedItems(t, "d1"), "nothing before the window closes")
		time.Sleep(1100 * time.Millisecond)
		drain(t, eng)
		for sub, want := range map[string]string{"d1": "3 events", "d2": "1 events"} {
			items := h.feedItems(t, sub)
			require.Len(t, items, 1)
			require.True(t, strings.HasPrefix(items[0]["content"].(string), want), "%v", items[0])
		}
	})
}
