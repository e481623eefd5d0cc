package httpapi_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/engine"
)

// This file holds the helpers of the pipeline suite (workflows, triggers,
// the engine, the inbox and events): the engine is driven by hand with
// RunOnce, so every test decides exactly when workers run.

// newEngine is an engine on the harness's store; tests drive it with drain.
func (h *harness) newEngine(opts engine.Options) *engine.Engine {
	opts.Store = h.DB
	if opts.Metrics == nil {
		opts.Metrics = h.Metrics
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return engine.New(opts)
}

// drain runs batches until no job is due and returns how many jobs ran.
func drain(t testing.TB, e *engine.Engine) int {
	t.Helper()
	total := 0
	for range 10_000 {
		n, err := e.RunOnce(context.Background())
		require.NoError(t, err)
		if n == 0 {
			return total
		}
		total += n
	}
	t.Fatal("the engine never ran out of due jobs")
	return total
}

// createWorkflow creates a workflow as the given caller and returns it.
func (h *harness) createWorkflow(t testing.TB, auth string, body map[string]any) map[string]any {
	t.Helper()
	res := h.call(t, auth, "POST", "/v2/workflows", body, nil)
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
	return res.Object(t)
}

// trigger sends one event as the given caller and expects it processed.
func (h *harness) trigger(t testing.TB, auth string, body map[string]any) map[string]any {
	t.Helper()
	res := h.call(t, auth, "POST", "/v1/events/trigger", body, nil)
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
	out := res.Object(t)
	require.Equal(t, true, out["acknowledged"], "%s", res.Raw)
	require.Equal(t, "processed", out["status"], "%s", res.Raw)
	return out
}

// feedPath is the inbox feed of a subscriber with an optional query.
func feedPath(subscriberID string, q url.Values) string {
	p := "/v1/subscribers/" + url.PathEscape(subscriberID) + "/notifications/feed"
	if len(q) > 0 {
		p += "?" + q.Encode()
	}
	return p
}

// markPath is the mark-as path of a subscriber.
func markPath(subscriberID string) string {
	return "/v1/subscribers/" + url.PathEscape(subscriberID) + "/messages/mark-as"
}

// feed reads one page of a subscriber's inbox as the development key.
func (h *harness) feed(t testing.TB, subscriberID string, q url.Values) map[string]any {
	t.Helper()
	res := h.call(t, h.authFor(asDev), "GET", feedPath(subscriberID, q), nil, nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
	return res.Object(t)
}

// feedItems returns the items of a subscriber's first feed page (100 items).
func (h *harness) feedItems(t testing.TB, subscriberID string) []map[string]any {
	t.Helper()
	return objects(t, h.feed(t, subscriberID, url.Values{"limit": {"100"}})["data"])
}

// event retrieves a notification as the development key.
func (h *harness) event(t testing.TB, notificationID string) map[string]any {
	t.Helper()
	res := h.call(t, h.authFor(asDev), "GET", "/v1/notifications/"+notificationID, nil, nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
	return res.Object(t)
}

// onlyJob is the one job of the one notification of a transaction.
func (h *harness) onlyJob(t testing.TB, transactionID string) map[string]any {
	t.Helper()
	list := objects(t, h.events(t, url.Values{"transactionId": {transactionID}})["data"])
	require.Len(t, list, 1, transactionID)
	jobs := objects(t, h.event(t, list[0]["_id"].(string))["jobs"])
	require.Len(t, jobs, 1, transactionID)
	return jobs[0]
}

// events lists notifications as the development key.
func (h *harness) events(t testing.TB, q url.Values) map[string]any {
	t.Helper()
	res := h.call(t, h.authFor(asDev), "GET", "/v1/notifications?"+q.Encode(), nil, nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
	return res.Object(t)
}

// count runs a count(*) query on the harness's store.
func (h *harness) count(t testing.TB, query string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, h.DB.Writer().QueryRow(query, args...).Scan(&n), query)
	return n
}

// objects converts a decoded JSON array of objects.
func objects(t testing.TB, v any) []map[string]any {
	t.Helper()
	arr, ok := v.([]any)
	require.True(t, ok, "not an array: %v", v)
	out := make([]map[string]any, len(arr))
	for i, x := range arr {
		out[i], ok = x.(map[string]any)
		require.True(t, ok, "not an object: %v", x)
	}
	return out
}

// ids returns the `_id` of each object.
func ids(items []map[string]any) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i], _ = it["_id"].(string)
	}
	return out
}

// The enumerations an event's execution details must use (OpenAPI ExecutionDetail).
var (
	detailStatuses = []any{"Success", "Warning", "Failed", "Pending", "Queued", "ReadConfirmation"}
	detailSources  = []any{"Credentials", "Internal", "Payload", "Webhook"}
)

// detailSummary is an execution detail reduced to what tests compare.
type detailSummary struct{ Status, Source string }

// jobDetails returns the status and source of each execution detail of a
// job, checking the enumerations on the way.
func jobDetails(t testing.TB, job map[string]any) []detailSummary {
	t.Helper()
	var out []detailSummary
	for _, d := range objects(t, job["executionDetails"]) {
		require.Contains(t, detailStatuses, d["status"], "%v", d)
		require.Contains(t, detailSources, d["source"], "%v", d)
		out = append(out, detailSummary{d["status"].(string), d["source"].(string)})
	}
	return out
}
