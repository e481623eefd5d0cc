package httpapi_test

import (
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/engine"
	"github.com/herald-notify/herald/internal/httpapi"
)

// inbox2 is a harness on a settable clock (the server's, the store's and
// the engine's) with in-app notifications of a
// workflow with severity, tags, data and both actions.
type inbox2 struct {
	h     *harness
	clock *testClock
	dev   string
	eng   *engine.Engine
	wf    map[string]any
}

func newInbox2(t *testing.T, h *harness) *inbox2 {
	c := &testClock{t: time.Now().UTC().Truncate(time.Millisecond)}
	h.Handler = httpapi.New(httpapi.Options{Store: h.DB, Keys: h.Keys, Logger: testLogger(t), Now: c.Now})
	x := &inbox2{h: h, clock: c, dev: h.authFor(asDev), eng: h.newEngine(engine.Options{Now: c.Now})}
	x.wf = h.createWorkflow(t, x.dev, map[string]any{"name": "Billing alert", "workflowId": "billing-alert",
		"severity": "high", "tags": []string{"billing", "alerts"}, "steps": []any{map[string]any{
			"name": "Inbox", "type": "in_app", "controlValues": map[string]any{
				"subject": "Invoice {{payload.n}}", "body": "Invoice {{payload.n}} is due",
				"redirect":        map[string]any{"url": "/invoices/{{payload.n}}", "target": "_blank"},
				"primaryAction":   map[string]any{"label": "Pay", "redirect": map[string]any{"url": "https://pay.example/{{payload.n}}"}},
				"secondaryAction": map[string]any{"label": "Later"},
				"data":            map[string]any{"n": "{{payload.n}}", "kind": "{{payload.kind}}"},
			}}}})
	h.createWorkflow(t, x.dev, map[string]any{"name": "Plain", "workflowId": "plain", "steps": []any{
		map[string]any{"name": "Inbox", "type": "in_app", "controlValues": map[string]any{"body": "Plain {{payload.n}}"}}}})
	return x
}

// notify sends one notification of a workflow to a subscriber, a second
// after the previous one, and runs it.
func (x *inbox2) notify(t *testing.T, workflow, subscriberID string, n int, kind string) {
	x.clock.Advance(time.Second)
	x.h.trigger(t, x.dev, map[string]any{"name": workflow, "to": subscriberID,
		"payload": map[string]any{"n": strconv.Itoa(n), "kind": kind}})
	require.Equal(t, 1, drain(t, x.eng))
}

func notificationsPath(subscriberID string) string { return subPath(subscriberID) + "/notifications" }

func (x *inbox2) list(t *testing.T, subscriberID string, q url.Values) map[string]any {
	t.Helper()
	res := x.h.call(t, x.dev, "GET", notificationsPath(subscriberID)+"?"+q.Encode(), nil, nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
	return res.Object(t)
}

// ids lists the ids of a subscriber's notifications that q selects, all pages.
func (x *inbox2) ids(t *testing.T, subscriberID string, q url.Values) []string {
	t.Helper()
	out := []string{}
	for {
		page := x.list(t, subscriberID, q)
		for _, n := range objects(t, page["data"]) {
			out = append(out, n["id"].(string))
		}
		if page["hasMore"] != true {
			return out
		}
		q.Set("after", out[len(out)-1])
	}
}

func (x *inbox2) counts(t *testing.T, subscriberID, filters string) []float64 {
	t.Helper()
	res := x.h.call(t, x.dev, "GET", notificationsPath(subscriberID)+"/count?filters="+url.QueryEscape(filters), nil, nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
	var out []float64
	for _, c := range objects(t, res.JSON(t)) {
		out = append(out, c["count"].(float64))
	}
	return out
}

func (x *inbox2) unseen(t *testing.T, subscriberID string) float64 {
	t.Helper()
	res := x.h.call(t, x.dev, "GET", "/v1/subscribers/"+subscriberID+"/notifications/unseen", nil, nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
	return res.Object(t)["count"].(float64)
}

// TestInboxV2List: the list's shape, order, cursor and offset paging, every
// filter, the echoed filter, and its validation.
func TestInboxV2List(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		x := newInbox2(t, h)
		for i := 1; i <= 6; i++ {
			x.notify(t, "billing-alert", "ada", i, []string{"a", "b"}[i%2])
		}
		x.notify(t, "plain", "ada", 7, "")
		x.notify(t, "plain", "bob", 8, "")
		h.createSubscriber(t, x.dev, map[string]any{"subscriberId": "ada", "firstName": "Ada", "lastName": "Lovelace"})

		page := x.list(t, "ada", url.Values{"limit": {"3"}})
		require.Equal(t, true, page["hasMore"])
		require.Equal(t, map[string]any{}, page["filter"])
		data := objects(t, page["data"])
		require.Len(t, data, 3)
		require.Equal(t, "Plain 7", data[0]["body"], "newest first")
		require.Equal(t, "none", data[0]["severity"])
		require.NotContains(t, data[0], "primaryAction")
		n := data[1]
		require.Equal(t, "Invoice 6 is due", n["body"])
		require.Equal(t, "Invoice 6", n["subject"])
		require.Equal(t, "in_app", n["channelType"])
		require.Equal(t, "high", n["severity"])
		require.Equal(t, []any{"billing", "alerts"}, n["tags"])
		require.Equal(t, map[string]any{"n": "6", "kind": "a"}, n["data"])
		require.Equal(t, map[string]any{"url": "/invoices/6", "target": "_blank"}, n["redirect"])
		require.Equal(t, map[string]any{"label": "Pay", "isCompleted": false,
			"redirect": map[string]any{"url": "https://pay.example/6"}}, n["primaryAction"])
		require.Equal(t, map[string]any{"label": "Later", "isCompleted": false}, n["secondaryAction"])
		require.Equal(t, map[string]any{"id": x.wf["_id"], "identifier": "billing-alert", "name": "Billing alert",
			"critical": false, "tags": []any{"billing", "alerts"}, "severity": "high"}, n["workflow"])
		to := n["to"].(map[string]any)
		require.Equal(t, "ada", to["subscriberId"])
		require.Equal(t, "Ada", to["firstName"])
		for _, k := range []string{"isRead", "isSeen", "isArchived", "isSnoozed"} {
			require.Equal(t, false, n[k], k)
		}
		for _, k := range []string{"readAt", "firstSeenAt", "archivedAt", "snoozedUntil"} {
			require.Nil(t, n[k], k)
		}

		all := x.ids(t, "ada", url.Values{"limit": {"2"}})
		require.Len(t, all, 7, "the cursor pages through every notification once")
		require.Equal(t, all[:3], notificationIDs(data))
		offset := x.list(t, "ada", url.Values{"limit": {"2"}, "offset": {"2"}})
		require.Equal(t, all[2:4], notificationIDs(objects(t, offset["data"])))
		require.Equal(t, all[4:6], notificationIDs(objects(t, x.list(t, "ada", url.Values{"limit": {"2"}, "after": {all[1]},
			"offset": {"2"}})["data"])), "an offset counts after the cursor")

		// Filters.
		read := x.h.call(t, x.dev, "PATCH", notificationsPath("ada")+"/"+all[1]+"/read", nil, nil)
		require.Equal(t, http.StatusOK, read.Status, "%s", read.Raw)
		for _, c := range []struct {
			q    url.Values
			want []string
		}{
			{url.Values{"read": {"true"}}, all[1:2]},
			{url.Values{"read": {"false"}, "seen": {"false"}}, append(all[:1:1], all[2:]...)},
			{url.Values{"archived": {"true"}}, []string{}},
			{url.Values{"snoozed": {"false"}, "severity": {"none"}}, all[:1]},
			{url.Values{"severity": {"low", "high"}}, all[1:]},
			{url.Values{"severity": {"medium,none"}}, all[:1]},
			{url.Values{"tags": {"alerts", "other"}}, all[1:]},
			{url.Values{"tags": {`{"and":[{"or":["billing"]},{"or":["x","alerts"]}]}`}}, all[1:]},
			{url.Values{"tags": {"other"}}, []string{}},
			{url.Values{"data": {`{"kind":"b"}`}}, []string{all[2], all[4], all[6]}},
			{url.Values{"data": {`{"kind":"a","n":"4"}`}}, all[3:4]},
			{url.Values{"createdGte": {timeMS(t, x, all[3])}, "createdLte": {timeMS(t, x, all[1])}}, all[1:4]},
			{url.Values{"contextKeys": {"tenant:1"}}, []string{}}, // triggered without context
			{url.Values{"contextKeys": {""}}, all},
		} {
			require.Equal(t, c.want, x.ids(t, "ada", c.q), "%v", c.q)
		}
		echo := x.list(t, "ada", url.Values{"read": {"false"}, "severity": {"high"}, "tags": {"billing"}, "data": {`{"kind":"b"}`},
			"createdGte": {"1"}})["filter"]
		require.Equal(t, map[string]any{"read": false, "severity": []any{"high"}, "tags": []any{"billing"},
			"data": `{"kind":"b"}`, "createdGte": float64(1)}, echo)

		// Validation.
		for _, c := range []struct {
			q     string
			field string
		}{
			{"limit=0", "limit"}, {"limit=101", "limit"}, {"offset=-1", "offset"}, {"after=zz", "after"},
			{"after=" + objects(t, x.list(t, "bob", nil)["data"])[0]["id"].(string), "after"},
			{"read=yes", "read"}, {"archived=1", "archived"}, {"severity=urgent", "severity"},
			{"tags=" + url.QueryEscape(`{"or":["a"]}`), "tags"}, {"data=" + url.QueryEscape(`[1]`), "data"},
			{"data=nope", "data"}, {"createdGte=-5", "createdGte"}, {"createdLte=soon", "createdLte"},
		} {
			target := notificationsPath("ada") + "?" + c.q
			requireError(t, x.h.call(t, x.dev, "GET", target, nil, nil), http.StatusUnprocessableEntity, "GET", target, c.field)
		}
		target := notificationsPath("nobody")
		requireError(t, x.h.call(t, x.dev, "GET", target, nil, nil), http.StatusNotFound, "GET", target)
	})
}

func notificationIDs(items []map[string]any) []string {
	out := []string{}
	for _, n := range items {
		out = append(out, n["id"].(string))
	}
	return out
}

// timeMS is the createdAt of a listed notification in Unix milliseconds.
func timeMS(t *testing.T, x *inbox2, id string) string {
	for _, n := range objects(t, x.list(t, "ada", url.Values{"limit": {"100"}})["data"]) {
		if n["id"] == id {
			at, err := time.Parse(time.RFC3339, n["createdAt"].(string))
			require.NoError(t, err)
			return strconv.FormatInt(at.UnixMilli(), 10)
		}
	}
	t.Fatalf("no notification %s", id)
	return ""
}

// TestInboxV2Count: one exact count per filter, echoed, as state changes;
// the v1 unseen count and feed agree; and the filters' validation.
func TestInboxV2Count(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		x := newInbox2(t, h)
		for i := 1; i <= 4; i++ {
			x.notify(t, "billing-alert", "ada", i, []string{"a", "b"}[i%2])
		}
		x.notify(t, "plain", "ada", 5, "")
		all := x.ids(t, "ada", url.Values{})
		filters := `[{}, {"read":false,"archived":false,"snoozed":false}, {"seen":false}, {"archived":true},` +
			` {"snoozed":true}, {"severity":"high"}, {"severity":["none","low"],"read":false}, {"tags":["billing"]},` +
			` {"tags":{"and":[{"or":["alerts"]}]},"read":true}, {"data":"{\"kind\":\"a\"}"}, {"data":{"kind":"b"},"archived":false}]`
		require.Equal(t, []float64{5, 5, 5, 0, 0, 4, 1, 4, 0, 2, 2}, x.counts(t, "ada", filters))
		res := x.h.call(t, x.dev, "GET", notificationsPath("ada")+"/count?filters="+url.QueryEscape(`[{"read":false, "tags":["a"]}]`), nil, nil)
		require.Equal(t, []any{map[string]any{"count": float64(0), "filter": map[string]any{"read": false, "tags": []any{"a"}}}},
			res.JSON(t), "the filter is echoed as sent")

		patch := func(id, action string, body any) {
			res := x.h.call(t, x.dev, "PATCH", notificationsPath("ada")+"/"+id+"/"+action, body, nil)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		}
		patch(all[0], "read", nil)    // the plain one
		patch(all[1], "archive", nil) // kind a
		patch(all[2], "snooze", map[string]any{"snoozeUntil": x.clock.Now().Add(time.Hour).Format(time.RFC3339)})
		require.Equal(t, []float64{5, 2, 2, 1, 1, 4, 0, 4, 1, 2, 2}, x.counts(t, "ada", filters))
		require.EqualValues(t, 2, x.unseen(t, "ada"), "unseen: the inbox proper only")
		feed := h.feed(t, "ada", url.Values{"page": {"1"}, "limit": {"1"}})
		require.EqualValues(t, 3, feed["totalCount"], "the v1 feed holds neither archived nor snoozed notifications")
		require.Len(t, h.feedItems(t, "ada"), 3)

		for _, c := range []struct {
			filters string
			status  int
			fields  []string
		}{
			{"", http.StatusUnprocessableEntity, []string{"filters"}},
			{"nope", http.StatusBadRequest, nil},
			{`{"read":true}`, http.StatusBadRequest, nil},
			{"[" + repeat(`{},`, 30) + "{}]", http.StatusUnprocessableEntity, []string{"filters"}},
			{`[1, {"read":"yes"}, {"severity":"urgent"}, {"tags":[""]}, {"data":"[1]"}]`, http.StatusUnprocessableEntity,
				[]string{"filters.0", "filters.1.read", "filters.2.severity", "filters.3.tags", "filters.4.data"}},
		} {
			target := notificationsPath("ada") + "/count"
			if c.filters != "" {
				target += "?filters=" + url.QueryEscape(c.filters)
			}
			requireError(t, x.h.call(t, x.dev, "GET", target, nil, nil), c.status, "GET", target, c.fields...)
		}
		target := notificationsPath("nobody") + "/count?filters=%5B%5D"
		requireError(t, x.h.call(t, x.dev, "GET", target, nil, nil), http.StatusNotFound, "GET", target)
	})
}

// TestInboxV2Bulk: seen (by ids and by filter), read, archive, read-archive
// and delete answer 204 and change exactly what they select, counts and the
// v1 feed following.
func TestInboxV2Bulk(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		x := newInbox2(t, h)
		for i := 1; i <= 4; i++ {
			x.notify(t, "billing-alert", "ada", i, []string{"a", "b"}[i%2])
		}
		x.notify(t, "plain", "ada", 5, "")
		x.notify(t, "plain", "bob", 6, "")
		all := x.ids(t, "ada", url.Values{}) // 5 plain, 4 a, 3 b, 2 a, 1 b
		bulk := func(action string, body any) {
			t.Helper()
			res := x.h.call(t, x.dev, "POST", notificationsPath("ada")+"/"+action, body, nil)
			require.Equal(t, http.StatusNoContent, res.Status, "%s", res.Raw)
			require.Empty(t, res.Raw)
		}
		state := func() string {
			out := ""
			for _, n := range objects(t, x.list(t, "ada", url.Values{"limit": {"100"}})["data"]) {
				out += flagsOf(n) + " "
			}
			return out
		}
		bulk("seen", map[string]any{"notificationIds": []string{all[0], all[4]}})
		require.Equal(t, "-s-- ---- ---- ---- -s-- ", state())
		bulk("seen", map[string]any{"data": `{"kind":"b"}`})
		require.Equal(t, "-s-- ---- -s-- ---- -s-- ", state())
		require.EqualValues(t, 2, x.unseen(t, "ada"))
		bulk("read", map[string]any{"tags": map[string]any{"and": []any{map[string]any{"or": []string{"billing"}}}}})
		require.Equal(t, "-s-- rs-- rs-- rs-- rs-- ", state())
		x.h.call(t, x.dev, "PATCH", notificationsPath("ada")+"/"+all[1]+"/unread", nil, nil)
		bulk("read-archive", nil)
		require.Equal(t, "-s-- -s-- rsa- rsa- rsa- ", state(), "only the read ones")
		require.Equal(t, []float64{2, 3}, x.counts(t, "ada", `[{"archived":false},{"archived":true}]`))
		bulk("archive", map[string]any{})
		require.Equal(t, "rsa- rsa- rsa- rsa- rsa- ", state())
		require.Empty(t, h.feedItems(t, "ada"), "archived notifications leave the v1 feed")
		bulk("delete", map[string]any{"tags": []string{"alerts"}})
		require.Equal(t, all[:1], x.ids(t, "ada", url.Values{}))
		bulk("delete", "")
		require.Empty(t, x.ids(t, "ada", url.Values{}))
		require.Equal(t, []float64{0}, x.counts(t, "ada", `[{}]`))
		require.Len(t, x.ids(t, "bob", url.Values{}), 1, "another subscriber's are untouched")

		for _, c := range []struct {
			action string
			body   any
			status int
			fields []string
		}{
			{"seen", map[string]any{"notificationIds": []string{"nope"}}, http.StatusUnprocessableEntity, []string{"notificationIds.0"}},
			{"seen", map[string]any{"notificationIds": "x"}, http.StatusUnprocessableEntity, []string{"notificationIds"}},
			{"read", map[string]any{"tags": "billing"}, http.StatusUnprocessableEntity, []string{"tags"}},
			{"archive", map[string]any{"data": "{"}, http.StatusUnprocessableEntity, []string{"data"}},
			{"delete", "[]", http.StatusBadRequest, nil},
		} {
			target := notificationsPath("ada") + "/" + c.action
			requireError(t, x.h.call(t, x.dev, "POST", target, c.body, nil), c.status, "POST", target, c.fields...)
		}
		target := notificationsPath("nobody") + "/read"
		requireError(t, x.h.call(t, x.dev, "POST", target, map[string]any{}, nil), http.StatusNotFound, "POST", target)
	})
}

// flagsOf is a listed notification's state in short: r read, s seen, a
// archived, z snoozed.
func flagsOf(n map[string]any) string {
	out := ""
	for _, f := range []struct{ key, c string }{{"isRead", "r"}, {"isSeen", "s"}, {"isArchived", "a"}, {"isSnoozed", "z"}} {
		if n[f.key] == true {
			out += f.c
		} else {
			out += "-"
		}
	}
	return out
}
