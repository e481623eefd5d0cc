package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/engine"
)

// Novu's v2 delay and digest controls (issue 26): the timed delay and the
// cron digest in the subscriber's timezone, the digest's lookBackWindow,
// the dynamic throttle; and sync carrying every new control.

// lastDetailOf is a job's last execution detail.
func lastDetailOf(t *testing.T, job map[string]any) map[string]any {
	t.Helper()
	details := objects(t, job["executionDetails"])
	require.NotEmpty(t, details)
	return details[len(details)-1]
}

// nextAt is the first instant after from at hh:mm on a weekday (-1: any
// day) in loc, by walking minutes: the test's own reading of a cron.
func nextAt(from time.Time, loc *time.Location, weekday, hh, mm int) time.Time {
	t := from.In(loc).Truncate(time.Minute).Add(time.Minute)
	for {
		if t.Hour() == hh && t.Minute() == mm && (weekday < 0 || int(t.Weekday()) == weekday) {
			return t
		}
		t = t.Add(time.Minute)
	}
}

// TestTimedDelayAndCronDigest: a timed delay holds the workflow until the
// cron's next time in the subscriber's timezone (UTC without one); a cron
// digest's window closes then.
func TestTimedDelayAndCronDigest(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		h.createWorkflow(t, dev, map[string]any{"name": "Monday", "workflowId": "monday", "steps": []any{
			map[string]any{"name": "inbox", "type": "in_app", "controlValues": map[string]any{"body": "now"}},
			map[string]any{"name": "monday", "type": "delay", "controlValues": map[string]any{"type": "timed", "cron": "0 9 * * 1"}},
			map[string]any{"name": "later", "type": "in_app", "controlValues": map[string]any{"body": "monday"}},
		}})
		h.createWorkflow(t, dev, map[string]any{"name": "Daily", "workflowId": "daily", "steps": []any{
			map[string]any{"name": "inbox", "type": "in_app", "controlValues": map[string]any{"body": "now"}},
			map[string]any{"name": "daily", "type": "digest", "controlValues": map[string]any{"cron": "30 9 * * *", "digestKey": "projectId"}},
			map[string]any{"name": "summary", "type": "in_app", "controlValues": map[string]any{"body": "{{step.total_count}} for {{payload.projectId}}"}},
		}})
		h.createSubscriber(t, dev, map[string]any{"subscriberId": "ny", "timezone": "America/New_York"})
		h.createSubscriber(t, dev, map[string]any{"subscriberId": "utc"})
		clock := &testClock{t: time.Now().Add(time.Minute)}
		eng := h.newEngine(engine.Options{Now: clock.Now})
		ny, err := time.LoadLocation("America/New_York")
		require.NoError(t, err)

		h.trigger(t, dev, map[string]any{"name": "monday", "to": "ny", "transactionId": "m-ny"})
		h.trigger(t, dev, map[string]any{"name": "monday", "to": "utc", "transactionId": "m-utc"})
		for _, p := range []string{"p1", "p1", "p2"} {
			h.trigger(t, dev, map[string]any{"name": "daily", "to": "ny", "payload": map[string]any{"projectId": p}})
		}
		drain(t, eng)
		start := clock.Now()
		for tx, loc := range map[string]*time.Location{"m-ny": ny, "m-utc": time.UTC} {
			jobs := h.jobsOf(t, tx)
			require.Equal(t, "delayed", jobs[1]["status"], tx)
			want := nextAt(start, loc, int(time.Monday), 9, 0)
			require.Equal(t, "Delayed until "+want.UTC().Format(time.RFC3339Nano), lastDetailOf(t, jobs[1])["detail"], tx)
		}
		windowEnd := nextAt(start, ny, -1, 9, 30)
		ends := map[string]bool{}
		for _, n := range objects(t, h.events(t, map[string][]string{"subscriberIds": {"ny"}})["data"]) {
			jobs := objects(t, h.event(t, n["_id"].(string))["jobs"])
			if len(jobs) == 3 && jobs[1]["type"] == "digest" && jobs[1]["status"] == "delayed" {
				ends[lastDetailOf(t, jobs[1])["detail"].(string)] = true
			}
		}
		require.Equal(t, map[string]bool{"Digest window opened until " + windowEnd.UTC().Format(time.RFC3339): true}, ends,
			"one window per digestKey value, both closing at 09:30 New York")

		clock.Advance(windowEnd.Sub(clock.Now()) + time.Second)
		drain(t, eng)
		var got []string
		for _, it := range h.feedItems(t, "ny") {
			if c := it["content"].(string); strings.Contains(c, " for ") {
				got = append(got, c)
			}
		}
		require.ElementsMatch(t, []string{"2 for p1", "1 for p2"}, got)
	})
}

// TestDigestLookBackWindow: an event with no other event of its key in the
// look-back window before it goes at once, alone (the digest job skipped);
// one that follows another within it opens (or joins) a digest.
func TestDigestLookBackWindow(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		h.createWorkflow(t, dev, map[string]any{"name": "Look back", "workflowId": "look-back", "steps": []any{
			map[string]any{"name": "batch", "type": "digest", "controlValues": map[string]any{"amount": 1, "unit": "seconds",
				"lookBackWindow": map[string]any{"amount": 5, "unit": "minutes"}}},
			map[string]any{"name": "inbox", "type": "in_app", "controlValues": map[string]any{"body": "{{step.total_count}} events"}},
		}})
		h.createSubscriber(t, dev, map[string]any{"subscriberId": "lb"})
		eng := h.newEngine(engine.Options{})
		for i := range 3 {
			h.trigger(t, dev, map[string]any{"name": "look-back", "to": "lb", "payload": map[string]any{"i": i},
				"transactionId": "lb-" + string(rune('0'+i))})
		}
		require.Equal(t, "skipped", h.jobsOf(t, "lb-0")[0]["status"], "the first event goes at once")
		require.Equal(t, "delayed", h.jobsOf(t, "lb-1")[0]["status"], "the next one opens a digest")
		require.Equal(t, "merged", h.jobsOf(t, "lb-2")[0]["status"], "and the third joins it")
		drain(t, eng)
		deadline := time.Now().Add(5 * time.Second)
		for len(h.feedItems(t, "lb")) < 2 && time.Now().Before(deadline) {
			drain(t, eng)
			time.Sleep(50 * time.Millisecond)
		}
		var got []string
		for _, it := range h.feedItems(t, "lb") {
			got = append(got, it["content"].(string))
		}
		require.ElementsMatch(t, []string{"1 events", "2 events"}, got)
	})
}

// TestDynamicThrottle: the window lasts until the payload's time; a time in
// the past fails the throttle and stops the workflow.
func TestDynamicThrottle(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		h.createWorkflow(t, dev, map[string]any{"name": "Dyn", "workflowId": "dyn", "steps": []any{
			map[string]any{"name": "limit", "type": "throttle", "controlValues": map[string]any{"type": "dynamic", "dynamicKey": "payload.until"}},
			map[string]any{"name": "inbox", "type": "in_app", "controlValues": map[string]any{"body": "x"}},
		}})
		h.createSubscriber(t, dev, map[string]any{"subscriberId": "dy"})
		clock := &testClock{t: time.Now().Add(time.Minute)}
		eng := h.newEngine(engine.Options{Now: clock.Now})
		until := clock.Now().Add(time.Hour).UTC().Format(time.RFC3339)
		for _, tx := range []string{"d1", "d2"} {
			h.trigger(t, dev, map[string]any{"name": "dyn", "to": "dy", "payload": map[string]any{"until": until}, "transactionId": tx})
			drain(t, eng)
		}
		h.trigger(t, dev, map[string]any{"name": "dyn", "to": "dy", "payload": map[string]any{"until": "2001-01-01T00:00:00Z"}, "transactionId": "d3"})
		h.trigger(t, dev, map[string]any{"name": "dyn", "to": "dy", "payload": map[string]any{}, "transactionId": "d4"})
		drain(t, eng)
		require.Equal(t, []string{"completed", "completed"}, h.jobStatuses(t, "d1"))
		require.Equal(t, []string{"skipped", "skipped"}, h.jobStatuses(t, "d2"))
		var raw map[string]any
		require.NoError(t, json.Unmarshal([]byte(lastDetailOf(t, h.jobsOf(t, "d2")[0])["raw"].(string)), &raw))
		require.Equal(t, until, strings.Replace(raw["throttledUntil"].(string), ".000Z", "Z", 1), "the window ends at the payload's time")
		require.Equal(t, []string{"failed", "canceled"}, h.jobStatuses(t, "d3"))
		require.Equal(t, "Throttle window in past", lastDetailOf(t, h.jobsOf(t, "d3")[0])["detail"])
		require.Equal(t, []string{"completed", "completed"}, h.jobStatuses(t, "d4"), "no usable value: not throttled")
	})
}

// TestSyncCarriesStepControls: syncing a workflow to another environment
// carries its conditions, throttle, HTTP request and cron controls.
func TestSyncCarriesStepControls(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		res := h.call(t, dev, "POST", "/v1/environments", map[string]any{"name": "Staging"}, nil)
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
		env := res.Object(t)
		stagingKey := "ApiKey " + objects(t, env["apiKeys"])[0]["key"].(string)
		steps := []any{
			map[string]any{"name": "inbox", "type": "in_app", "controlValues": map[string]any{"body": "x",
				"skip": map[string]any{"==": []any{map[string]any{"var": "payload.vip"}, true}}}},
			map[string]any{"name": "limit", "type": "throttle", "controlValues": map[string]any{"type": "fixed", "amount": 2,
				"unit": "days", "threshold": 4, "throttleKey": "orderId"}},
			map[string]any{"name": "crm", "type": "http_request", "controlValues": map[string]any{"method": "PUT",
				"url": "https://crm.example.com/{{payload.id}}", "continueOnFailure": true}},
			map[string]any{"name": "daily", "type": "digest", "controlValues": map[string]any{"cron": "0 9 * * *"}},
		}
		h.createWorkflow(t, dev, map[string]any{"name": "Carry", "workflowId": "carry", "steps": steps})
		sync := h.call(t, dev, "PUT", "/v2/workflows/carry/sync", map[string]any{"targetEnvironmentId": env["_id"]}, nil)
		require.Equal(t, http.StatusOK, sync.Status, "%s", sync.Raw)
		src := h.call(t, dev, "GET", "/v2/workflows/carry", nil, nil).Object(t)
		dst := h.call(t, stagingKey, "GET", "/v2/workflows/carry", nil, nil).Object(t)
		for i, s := range objects(t, src["steps"]) {
			d := objects(t, dst["steps"])[i]
			require.Equal(t, s["type"], d["type"])
			require.Equal(t, mustJSON(t, s["controlValues"]), mustJSON(t, d["controlValues"]), "step %d", i)
		}
	})
}
