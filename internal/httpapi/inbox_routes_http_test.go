package httpapi_test

import (
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// inboxClient calls the /v1/inbox routes with one session's token, as
// @novu/js does.
type inboxClient struct {
	x     *inbox2
	token string
}

func (x *inbox2) client(t *testing.T, auth, subscriberID string) inboxClient {
	t.Helper()
	key := x.h.DevKey
	if auth == x.h.authFor(asProd) {
		key = x.h.ProdKey
	}
	data := x.h.openSession(t, x.h.identifierOf(t, auth), key, map[string]any{"subscriberId": subscriberID})
	return inboxClient{x: x, token: data["token"].(string)}
}

var clientHeaders = map[string]string{"Novu-API-Version": "2024-06-26", "Novu-Client-Version": "@novu/js@3.19.2",
	"Origin": "https://app.example.com"}

func (c inboxClient) call(t *testing.T, method, target string, body any) response {
	t.Helper()
	res := c.x.h.call(t, "Bearer "+c.token, method, target, body, clientHeaders)
	require.Equal(t, "*", res.Header.Get("Access-Control-Allow-Origin"), "CORS on every answer")
	return res
}

// ok calls a route that must answer 200 and returns its data.
func (c inboxClient) ok(t *testing.T, method, target string, body any) any {
	t.Helper()
	res := c.call(t, method, target, body)
	require.Equal(t, http.StatusOK, res.Status, "%s %s: %s", method, target, res.Raw)
	return res.Object(t)["data"]
}

// list reads one page: its ids and hasMore.
func (c inboxClient) list(t *testing.T, query string) ([]string, bool) {
	t.Helper()
	res := c.call(t, "GET", "/v1/inbox/notifications?"+query, nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
	body := res.Object(t)
	ids := []string{}
	for _, n := range objects(t, body["data"]) {
		ids = append(ids, n["id"].(string))
	}
	return ids, body["hasMore"].(bool)
}

func (c inboxClient) counts(t *testing.T, filters string) []map[string]any {
	t.Helper()
	return objects(t, c.ok(t, "GET", "/v1/inbox/notifications/count?filters="+url.QueryEscape(filters), nil))
}

func notificationPath(id, action string) string {
	return "/v1/inbox/notifications/" + id + "/" + action
}

// TestInboxClientList: the list and count as the clients call them — the
// envelope, cursor and offset paging, the clients' tags[] and severity[]
// keys, data, the created range, snoozed ones left out unless asked for,
// and the count's echoed filters.
func TestInboxClientList(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		x := newInbox2(t, h)
		for i := 1; i <= 3; i++ {
			x.notify(t, "billing-alert", "ada", i, []string{"a", "b"}[i%2])
		}
		x.notify(t, "plain", "ada", 4, "")
		x.notify(t, "plain", "bob", 5, "")
		ada := x.client(t, x.dev, "ada")

		all, more := ada.list(t, "limit=10&archived=false&snoozed=false")
		require.Len(t, all, 4)
		require.False(t, more)
		page, more := ada.list(t, "limit=2")
		require.Equal(t, all[:2], page)
		require.True(t, more)
		page, more = ada.list(t, "limit=2&after="+page[1])
		require.Equal(t, all[2:], page)
		require.False(t, more)
		page, _ = ada.list(t, "limit=10&offset=1")
		require.Equal(t, all[1:], page)

		for _, c := range []struct {
			query string
			want  []string
		}{
			{"tags[]=billing&tags[]=nope", all[1:]},
			{"tags[0][]=billing&tags[1][]=alerts", all[1:]},
			{"tags[0][]=billing&tags[1][]=nope", []string{}},
			{"severity[]=high&severity[]=low", all[1:]},
			{"severity=none", all[:1]},
			{"data=" + url.QueryEscape(`{"kind":"a"}`), []string{all[2]}},
			{"data=%7B%7D", all},
			{"read=true", []string{}},
			{"seen=false", all},
			{"createdGte=" + itoa(x.clock.Now().Add(time.Hour).UnixMilli()), []string{}},
			{"createdLte=" + itoa(x.clock.Now().UnixMilli()), all},
		} {
			got, _ := ada.list(t, "limit=10&"+c.query)
			require.Equal(t, c.want, got, c.query)
		}
		res := ada.call(t, "GET", "/v1/inbox/notifications?limit=10&read=false&tags[]=billing", nil)
		require.Equal(t, map[string]any{"read": false, "snoozed": false, "tags": []any{"billing"}}, res.Object(t)["filter"])

		for _, q := range []string{"limit=0", "limit=abc", "after=nope", "read=yes", "severity[]=urgent", "data=%5B1%5D",
			"tags[]=a&tags[0][]=b", "tags[10][]=a", "createdGte=-1"} {
			res := ada.call(t, "GET", "/v1/inbox/notifications?"+q, nil)
			require.True(t, res.Status == http.StatusBadRequest || res.Status == http.StatusUnprocessableEntity, "%s: %s", q, res.Raw)
			requireErrorShape(t, res, "GET", "/v1/inbox/notifications?"+q)
		}

		// The bell's four filters, echoed as sent.
		bell := `[{"read":false,"archived":false,"snoozed":false,"severity":"high"},` +
			`{"read":false,"archived":false,"snoozed":false,"severity":"medium"},` +
			`{"read":false,"archived":false,"snoozed":false,"severity":"low"},` +
			`{"read":false,"archived":false,"snoozed":false,"severity":"none"},{"tags":["billing"],"data":"{\"kind\":\"b\"}"}]`
		counts := ada.counts(t, bell)
		require.Len(t, counts, 5)
		for i, want := range []float64{3, 0, 0, 1, 2} {
			require.Equal(t, want, counts[i]["count"], i)
		}
		require.Equal(t, "high", counts[0]["filter"].(map[string]any)["severity"])
		require.Equal(t, "none", counts[3]["filter"].(map[string]any)["severity"])
		require.Equal(t, map[string]any{"tags": []any{"billing"}, "data": `{"kind":"b"}`}, counts[4]["filter"])
		for _, f := range []string{"", "nope", `{"read":false}`, `[{"severity":"urgent"}]`} {
			res := ada.call(t, "GET", "/v1/inbox/notifications/count?filters="+url.QueryEscape(f), nil)
			require.True(t, res.Status == http.StatusBadRequest || res.Status == http.StatusUnprocessableEntity, "%q: %s", f, res.Raw)
		}

		// The notification's shape, enveloped for the clients.
		n := ada.ok(t, "PATCH", notificationPath(all[1], "read"), nil).(map[string]any)
		require.Equal(t, all[1], n["id"])
		require.Equal(t, "Invoice 3 is due", n["body"])
		require.Equal(t, map[string]any{"url": "/invoices/3", "target": "_blank"}, n["redirect"], "the step's redirect is the notification's")
		require.Equal(t, map[string]any{"label": "Pay", "isCompleted": false,
			"redirect": map[string]any{"url": "https://pay.example/3"}}, n["primaryAction"], "the button's redirect stays the button's")
		require.Equal(t, "ada", n["to"].(map[string]any)["subscriberId"])
	})
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestInboxClientStateChanges: every single and bulk state change of the
// session's subscriber, each answered in the clients' shape, and the
// counts after each.
func TestInboxClientStateChanges(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		x := newInbox2(t, h)
		for i := 1; i <= 4; i++ {
			x.notify(t, "billing-alert", "ada", i, "a")
		}
		x.notify(t, "plain", "ada", 5, "")
		ada := x.client(t, x.dev, "ada")
		all, _ := ada.list(t, "limit=10")
		require.Len(t, all, 5)
		id := all[1]
		state := func(method, action string, body any) map[string]any {
			t.Helper()
			return ada.ok(t, method, notificationPath(id, action), body).(map[string]any)
		}
		unread := func() float64 {
			t.Helper()
			return ada.counts(t, `[{"read":false,"archived":false,"snoozed":false}]`)[0]["count"].(float64)
		}

		n := state("PATCH", "read", nil)
		require.True(t, n["isRead"].(bool) && n["isSeen"].(bool))
		require.NotNil(t, n["readAt"])
		require.Equal(t, float64(4), unread())
		n = state("PATCH", "unread", nil)
		require.False(t, n["isRead"].(bool))
		require.Nil(t, n["readAt"])
		require.Equal(t, float64(5), unread())
		n = state("PATCH", "archive", nil)
		require.True(t, n["isArchived"].(bool))
		require.NotNil(t, n["archivedAt"])
		got, _ := ada.list(t, "limit=10&archived=false")
		require.NotContains(t, got, id)
		got, _ = ada.list(t, "limit=10&archived=true")
		require.Equal(t, []string{id}, got)
		n = state("PATCH", "unarchive", nil)
		require.False(t, n["isArchived"].(bool))

		until := x.clock.Now().Add(2 * time.Hour).UTC().Format("2006-01-02T15:04:05.000Z")
		n = state("PATCH", "snooze", map[string]any{"snoozeUntil": until})
		require.True(t, n["isSnoozed"].(bool))
		require.Equal(t, until, n["snoozedUntil"])
		got, _ = ada.list(t, "limit=10")
		require.NotContains(t, got, id, "snoozed ones are left out unless asked for")
		got, _ = ada.list(t, "limit=10&snoozed=true")
		require.Equal(t, []string{id}, got)
		for _, bad := range []any{map[string]any{"snoozeUntil": x.clock.Now().Add(-time.Hour).Format(time.RFC3339)},
			map[string]any{"snoozeUntil": x.clock.Now().Add(91 * 24 * time.Hour).Format(time.RFC3339)},
			map[string]any{"snoozeUntil": "tomorrow"}, map[string]any{}} {
			res := ada.call(t, "PATCH", notificationPath(all[0], "snooze"), bad)
			require.True(t, res.Status == http.StatusBadRequest || res.Status == http.StatusUnprocessableEntity, "%v: %s", bad, res.Raw)
		}
		n = state("PATCH", "unsnooze", nil)
		require.False(t, n["isSnoozed"].(bool))
		require.Nil(t, n["snoozedUntil"])

		n = state("PATCH", "complete", map[string]any{"actionType": "primary"})
		require.Equal(t, true, n["primaryAction"].(map[string]any)["isCompleted"])
		require.Equal(t, false, n["secondaryAction"].(map[string]any)["isCompleted"])
		n = state("PATCH", "revert", map[string]any{"actionType": "primary"})
		require.Equal(t, false, n["primaryAction"].(map[string]any)["isCompleted"])
		n = state("PATCH", "complete", map[string]any{"actionType": "secondary"})
		require.Equal(t, true, n["secondaryAction"].(map[string]any)["isCompleted"])
		for _, bad := range []any{nil, map[string]any{}, map[string]any{"actionType": "tertiary"}} {
			res := ada.call(t, "PATCH", notificationPath(id, "complete"), bad)
			require.True(t, res.Status == http.StatusBadRequest || res.Status == http.StatusUnprocessableEntity, "%v: %s", bad, res.Raw)
		}
		res := ada.call(t, "PATCH", notificationPath(all[0], "complete"), map[string]any{"actionType": "primary"})
		require.Equal(t, http.StatusBadRequest, res.Status, "the plain notification has no button: %s", res.Raw)

		// Bulk changes answer 204 (with CORS) and change the matching ones.
		bulk := func(action string, body any) {
			t.Helper()
			res := ada.call(t, "POST", "/v1/inbox/notifications/"+action, body)
			require.Equal(t, http.StatusNoContent, res.Status, "%s: %s", action, res.Raw)
			require.Empty(t, res.Raw)
		}
		bulk("seen", map[string]any{"notificationIds": []string{all[0]}})
		require.Equal(t, []float64{3}, countsOf(ada.counts(t, `[{"seen":false}]`)))
		bulk("seen", map[string]any{})
		require.Equal(t, []float64{0}, countsOf(ada.counts(t, `[{"seen":false}]`)))
		bulk("read", map[string]any{"tags": []string{"billing"}, "data": `{"kind":"a"}`})
		require.Equal(t, float64(1), unread(), "the plain one is left")
		bulk("read-archive", map[string]any{"tags": []string{"billing"}})
		require.Equal(t, []float64{4, 1}, countsOf(ada.counts(t, `[{"archived":true},{"archived":false}]`)))
		bulk("archive", nil)
		require.Equal(t, []float64{5}, countsOf(ada.counts(t, `[{"archived":true}]`)))

		res = ada.call(t, "DELETE", notificationPath(id, "delete"), nil)
		require.Equal(t, http.StatusNoContent, res.Status, "%s", res.Raw)
		require.Equal(t, http.StatusNotFound, ada.call(t, "PATCH", notificationPath(id, "read"), nil).Status, "gone")
		bulk("delete", map[string]any{})
		require.Equal(t, []float64{0}, countsOf(ada.counts(t, `[{}]`)))
		for _, b := range []any{map[string]any{"notificationIds": []string{"nope"}}, map[string]any{"tags": "x"},
			map[string]any{"data": "[1]"}, "[]"} {
			res := ada.call(t, "POST", "/v1/inbox/notifications/seen", b)
			require.True(t, res.Status == http.StatusBadRequest || res.Status == http.StatusUnprocessableEntity, "%v: %s", b, res.Raw)
		}
	})
}

func countsOf(cs []map[string]any) []float64 {
	out := make([]float64, len(cs))
	for i, c := range cs {
		out[i] = c["count"].(float64)
	}
	return out
}

// TestInboxClientIsolation: a session acts on its own subscriber in its own
// environment alone — another subscriber's notification, or one of the
// same subscriberId in another environment, is a 404 on every route, and
// bulk changes leave the others' alone; API keys and sessions do not
// cross.
func TestInboxClientIsolation(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		x := newInbox2(t, h)
		x.notify(t, "billing-alert", "ada", 1, "a")
		x.notify(t, "billing-alert", "bob", 2, "a")
		ada, bob, prodAda := x.client(t, x.dev, "ada"), x.client(t, x.dev, "bob"), x.client(t, h.authFor(asProd), "ada")
		adaIDs, _ := ada.list(t, "limit=10")
		require.Len(t, adaIDs, 1)
		bobIDs, _ := bob.list(t, "limit=10")
		require.Len(t, bobIDs, 1)
		prodIDs, _ := prodAda.list(t, "limit=10")
		require.Empty(t, prodIDs, "another environment's ada has none")

		for _, c := range []inboxClient{bob, prodAda} {
			for _, rt := range []struct {
				method, action string
				body           any
			}{{"PATCH", "read", nil}, {"PATCH", "unread", nil}, {"PATCH", "archive", nil}, {"PATCH", "unarchive", nil},
				{"PATCH", "snooze", map[string]any{"snoozeUntil": x.clock.Now().Add(time.Hour).Format(time.RFC3339)}},
				{"PATCH", "unsnooze", nil}, {"PATCH", "complete", map[string]any{"actionType": "primary"}},
				{"PATCH", "revert", map[string]any{"actionType": "primary"}}, {"DELETE", "delete", nil}} {
				target := notificationPath(adaIDs[0], rt.action)
				requireError(t, c.call(t, rt.method, target, rt.body), http.StatusNotFound, rt.method, target)
			}
			target := "/v1/inbox/notifications?limit=10&after=" + adaIDs[0]
			requireError(t, c.call(t, "GET", target, nil), http.StatusUnprocessableEntity, "GET", target, "after")
			for _, action := range []string{"seen", "read", "archive", "delete"} {
				require.Equal(t, http.StatusNoContent, c.call(t, "POST", "/v1/inbox/notifications/"+action, map[string]any{}).Status)
			}
		}
		require.Equal(t, []float64{1, 1, 1}, countsOf(ada.counts(t, `[{"read":false},{"archived":false},{"seen":false}]`)),
			"ada's notification was left alone")
		got, _ := ada.list(t, "limit=10")
		require.Equal(t, adaIDs, got)

		// An API key is no session, a session no API key.
		requireError(t, h.call(t, x.dev, "GET", "/v1/inbox/notifications", nil, nil), http.StatusUnauthorized, "GET", "/v1/inbox/notifications")
		requireError(t, h.call(t, "Bearer "+ada.token, "GET", notificationsPath("ada"), nil, nil), http.StatusUnauthorized,
			"GET", notificationsPath("ada"))
		requireError(t, h.call(t, "", "GET", "/v1/inbox/preferences", nil, clientHeaders), http.StatusUnauthorized, "GET", "/v1/inbox/preferences")
	})
}

// TestInboxStepRedirects: an in-app step's button redirect belongs to the
// button; the notification links only to the step's own redirect.
func TestInboxStepRedirects(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		x := newInbox2(t, h)
		h.createWorkflow(t, x.dev, map[string]any{"name": "Button only", "workflowId": "button-only", "steps": []any{
			map[string]any{"name": "Inbox", "type": "in_app", "controlValues": map[string]any{"body": "Track {{payload.n}}",
				"primaryAction": map[string]any{"label": "Track", "redirect": map[string]any{"url": "/orders/{{payload.n}}", "target": "_self"}}}}}})
		x.notify(t, "button-only", "ada", 17, "")
		ada := x.client(t, x.dev, "ada")
		res := ada.call(t, "GET", "/v1/inbox/notifications?limit=10", nil)
		n := objects(t, res.Object(t)["data"])[0]
		require.NotContains(t, n, "redirect", "a click on the notification must not follow the button's link")
		require.Equal(t, map[string]any{"label": "Track", "isCompleted": false,
			"redirect": map[string]any{"url": "/orders/17", "target": "_self"}}, n["primaryAction"])
	})
}
