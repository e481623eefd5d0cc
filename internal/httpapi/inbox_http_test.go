package httpapi_test

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/engine"
)

// plainWorkflow has one in_app step whose content is the payload's n.
func plainWorkflow(name string) map[string]any {
	return map[string]any{"name": name, "steps": []any{
		map[string]any{"name": "Inbox", "type": "in_app", "controlValues": map[string]any{"body": "{{payload.n}}"}},
	}}
}

// contents returns the content of each feed item of a response.
func contents(t testing.TB, page map[string]any) []string {
	t.Helper()
	var out []string
	for _, it := range objects(t, page["data"]) {
		out = append(out, it["content"].(string))
	}
	return out
}

// TestFeedFilters covers the feed's read, seen and payload filters, its
// paging, and the validation of its query (docs/api-behaviour.md, "Inbox").
func TestFeedFilters(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		eng := h.newEngine(engine.Options{})
		h.createWorkflow(t, dev, plainWorkflow("Plain"))
		// Raw bodies, so that a payload may be sent with JSON escapes.
		for _, payload := range []string{
			`{"kind":"a","n":1,"meta":{"city":"caf\u00e9","tags":["x","y"]},"flag":true}`,
			`{"kind":"b","n":2,"meta":{"city":"Paris"},"flag":false}`,
			`{"kind":"a","n":3,"meta":{"city":"Paris"},"q":"ü~"}`,
			`{"kind":"b","n":4,"nothing":null,"big":1.5e3}`,
			`{"kind":"a","n":5,"text":"a \"quoted\" \\ line\nbreak"}`,
		} {
			res := h.call(t, dev, "POST", "/v1/events/trigger", `{"name":"plain","to":"fil","payload":`+payload+`}`, nil)
			require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
			require.Equal(t, 1, drain(t, eng)) // one at a time: the feed order is the trigger order
		}
		all := h.feed(t, "fil", nil)
		require.Equal(t, []string{"5", "4", "3", "2", "1"}, contents(t, all), "newest first")
		require.EqualValues(t, 5, all["totalCount"])
		require.Equal(t, false, all["hasMore"])
		order := ids(objects(t, all["data"]))
		byN := map[string]string{"5": order[0], "4": order[1], "3": order[2], "2": order[3], "1": order[4]}

		// Messages 1 and 2 read (which sees them), 3 seen.
		res := h.call(t, dev, "POST", markPath("fil"), map[string]any{"messageId": []string{byN["1"], byN["2"]}, "markAs": "read"}, nil)
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
		require.Equal(t, []string{byN["1"], byN["2"]}, ids(objects(t, res.JSON(t))), "in the order asked")
		res = h.call(t, dev, "POST", markPath("fil"), map[string]any{"messageId": byN["3"], "markAs": "seen"}, nil)
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)

		b64 := base64.StdEncoding.EncodeToString
		for _, c := range []struct {
			name  string
			query url.Values
			want  []string
		}{
			{"read", url.Values{"read": {"true"}}, []string{"2", "1"}},
			{"unread", url.Values{"read": {"false"}}, []string{"5", "4", "3"}},
			{"seen", url.Values{"seen": {"true"}}, []string{"3", "2", "1"}},
			{"unseen", url.Values{"seen": {"false"}}, []string{"5", "4"}},
			{"unread but seen", url.Values{"read": {"false"}, "seen": {"true"}}, []string{"3"}},
			{"payload leaf", url.Values{"payload": {b64([]byte(`{"kind":"a"}`))}}, []string{"5", "3", "1"}},
			{"payload leaves", url.Values{"payload": {b64([]byte(`{"kind":"a","n":3}`))}}, []string{"3"}},
			{"nested path", url.Values{"payload": {b64([]byte(`{"meta":{"city":"Paris"}}`))}}, []string{"3", "2"}},
			{"escaped string", url.Values{"payload": {b64([]byte(`{"meta":{"city":"café"}}`))}}, []string{"1"}},
			{"escapes in the filter", url.Values{"payload": {b64([]byte(`{"meta":{"city":"caf\u00e9"}}`))}}, []string{"1"}},
			{"quotes and newlines", url.Values{"payload": {b64([]byte(`{"text":"a \"quoted\" \\ line\nbreak"}`))}}, []string{"5"}},
			{"array value", url.Values{"payload": {b64([]byte(`{"meta":{"tags":["x","y"]}}`))}}, []string{"1"}},
			{"true", url.Values{"payload": {b64([]byte(`{"flag":true}`))}}, []string{"1"}},
			{"false", url.Values{"payload": {b64([]byte(`{"flag":false}`))}}, []string{"2"}},
			{"null", url.Values{"payload": {b64([]byte(`{"nothing":null}`))}}, []string{"4"}},
			{"number spelled otherwise", url.Values{"payload": {b64([]byte(`{"n":1.0}`))}}, []string{"1"}},
			{"exponent", url.Values{"payload": {b64([]byte(`{"big":1500}`))}}, []string{"4"}},
			{"no match", url.Values{"payload": {b64([]byte(`{"kind":"z"}`))}}, nil},
			{"absent path", url.Values{"payload": {b64([]byte(`{"nope":{"deeper":1}}`))}}, nil},
			{"empty object", url.Values{"payload": {b64([]byte(`{}`))}}, []string{"5", "4", "3", "2", "1"}},
			{"empty parameter", url.Values{"payload": {""}}, []string{"5", "4", "3", "2", "1"}},
			{"payload and read", url.Values{"payload": {b64([]byte(`{"kind":"a"}`))}, "read": {"false"}}, []string{"5", "3"}},
		} {
			t.Run(c.name, func(t *testing.T) {
				page := h.feed(t, "fil", c.query)
				require.Equal(t, c.want, contents(t, page))
				require.EqualValues(t, len(c.want), page["totalCount"])
				require.Equal(t, false, page["hasMore"])
			})
		}

		t.Run("base64 alphabets and padding", func(t *testing.T) {
			filter := []byte(`{"q":"ü~"}`)
			std := base64.StdEncoding.EncodeToString(filter)
			require.True(t, strings.ContainsAny(std, "+/") && strings.HasSuffix(std, "="), "the filter exercises both alphabets: %s", std)
			for _, enc := range []string{std, strings.TrimRight(std, "="), base64.URLEncoding.EncodeToString(filter),
				base64.RawURLEncoding.EncodeToString(filter)} {
				require.Equal(t, []string{"3"}, contents(t, h.feed(t, "fil", url.Values{"payload": {enc}})), enc)
			}
		})

		t.Run("paging", func(t *testing.T) {
			for _, c := range []struct {
				page    int
				want    []string
				hasMore bool
			}{
				{0, []string{"5", "4"}, true},
				{1, []string{"3", "2"}, true},
				{2, []string{"1"}, false},
				{3, nil, false},
			} {
				p := h.feed(t, "fil", url.Values{"limit": {"2"}, "page": {strconv.Itoa(c.page)}})
				require.Equal(t, c.want, contents(t, p), "page %d", c.page)
				require.Equal(t, c.hasMore, p["hasMore"], "page %d", c.page)
				require.EqualValues(t, 5, p["totalCount"], "page %d", c.page)
				require.EqualValues(t, c.page, p["page"])
				require.EqualValues(t, len(c.want), p["pageSize"])
			}
			p := h.feed(t, "fil", url.Values{"limit": {"2"}, "page": {"1"}, "payload": {b64([]byte(`{"kind":"a"}`))}})
			require.Equal(t, []string{"1"}, contents(t, p))
			require.EqualValues(t, 3, p["totalCount"])
			require.Equal(t, false, p["hasMore"])
			p = h.feed(t, "fil", url.Values{"limit": {"3"}})
			require.Equal(t, true, p["hasMore"])
			require.EqualValues(t, 5, p["totalCount"])
			require.Len(t, contents(t, h.feed(t, "fil", url.Values{"limit": {"100"}})), 5)
		})

		t.Run("validation", func(t *testing.T) {
			deep := `{"a":` + strings.Repeat(`{"a":`, 9) + `1` + strings.Repeat(`}`, 10)
			for _, c := range []struct {
				name   string
				query  string
				status int
				fields []string
			}{
				{"negative page", "page=-1", 422, []string{"page"}},
				{"page not a number", "page=x", 422, []string{"page"}},
				{"limit zero", "limit=0", 422, []string{"limit"}},
				{"limit above 100", "limit=101", 422, []string{"limit"}},
				{"limit not a number", "limit=1.5", 422, []string{"limit"}},
				{"read not a boolean", "read=yes", 422, []string{"read"}},
				{"seen not a boolean", "seen=1", 422, []string{"seen"}},
				{"every field at once", "page=-1&limit=0&read=x&seen=y", 422, []string{"page", "limit", "read", "seen"}},
				{"payload not base64", "payload=" + url.QueryEscape("not base64!"), 400, nil},
				{"payload base64 of a non-object", "payload=" + b64([]byte(`[1]`)), 400, nil},
				{"payload base64 of text", "payload=" + b64([]byte(`kind=a`)), 400, nil},
				{"payload base64 of null", "payload=" + b64([]byte(`null`)), 400, nil},
				{"payload with trailing data", "payload=" + b64([]byte(`{"a":1} {}`)), 400, nil},
				{"payload nested too deep", "payload=" + b64([]byte(deep)), 422, []string{"payload"}},
				{"payload value with NUL", "payload=" + b64([]byte(`{"a":"\u0000"}`)), 422, []string{"payload"}},
				{"payload key with NUL", "payload=" + b64([]byte(`{"a\u0000":1}`)), 422, []string{"payload"}},
				{"payload key with a quote", "payload=" + b64([]byte(`{"a\"":1}`)), 422, []string{"payload"}},
			} {
				t.Run(c.name, func(t *testing.T) {
					target := feedPath("fil", nil) + "?" + c.query
					requireError(t, h.call(t, dev, "GET", target, nil, nil), c.status, "GET", target, c.fields...)
				})
			}
			target := feedPath("nobody", nil)
			requireError(t, h.call(t, dev, "GET", target, nil, nil), http.StatusNotFound, "GET", target)
		})
	})
}

// TestInboxOperations covers the unseen count, mark-all, mark-as edge cases,
// message actions and message deletion.
func TestInboxOperations(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		eng := h.newEngine(engine.Options{})
		h.createWorkflow(t, dev, commentWorkflow())
		for i := range 4 {
			h.trigger(t, dev, map[string]any{"name": "comment-posted", "to": "ops", "payload": commentPayload("p" + strconv.Itoa(i))})
		}
		h.trigger(t, dev, map[string]any{"name": "comment-posted", "to": "other", "payload": commentPayload("o")})
		drain(t, eng)
		msgs := ids(h.feedItems(t, "ops"))
		require.Len(t, msgs, 4)
		otherMsg := ids(h.feedItems(t, "other"))[0]

		unseen := func(sid string) any {
			t.Helper()
			res := h.call(t, dev, "GET", "/v1/subscribers/"+sid+"/notifications/unseen", nil, nil)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
			return res.Object(t)["count"]
		}
		require.EqualValues(t, 4, unseen("ops"))

		t.Run("mark-as edge cases", func(t *testing.T) {
			// Another subscriber's message is ignored; the answer lists what matched.
			res := h.call(t, dev, "POST", markPath("ops"), map[string]any{"messageId": []string{otherMsg, msgs[0]}, "markAs": "seen"}, nil)
			require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
			require.Equal(t, []string{msgs[0]}, ids(objects(t, res.JSON(t))))
			require.Equal(t, false, h.feedItems(t, "other")[0]["seen"])
			require.EqualValues(t, 3, unseen("ops"))
			// An unknown but well-formed id matches nothing.
			res = h.call(t, dev, "POST", markPath("ops"), map[string]any{"messageId": "0123456789abcdef01234567", "markAs": "read"}, nil)
			require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
			require.Empty(t, res.Array(t))

			tooMany := make([]string, 101)
			for i := range tooMany {
				tooMany[i] = msgs[0]
			}
			for _, c := range []struct {
				name   string
				body   any
				status int
				fields []string
			}{
				{"101 ids", map[string]any{"messageId": tooMany, "markAs": "read"}, 422, []string{"messageId"}},
				{"no ids", map[string]any{"messageId": []string{}, "markAs": "read"}, 422, []string{"messageId"}},
				{"malformed id", map[string]any{"messageId": []string{msgs[0], "nope"}, "markAs": "read"}, 422, []string{"messageId.1"}},
				{"unknown markAs", map[string]any{"messageId": msgs[0], "markAs": "archived"}, 422, []string{"markAs"}},
				{"missing fields", map[string]any{}, 422, []string{"messageId", "markAs"}},
				{"not JSON", "{", 400, nil},
			} {
				t.Run(c.name, func(t *testing.T) {
					requireError(t, h.call(t, dev, "POST", markPath("ops"), c.body, nil), c.status, "POST", markPath("ops"), c.fields...)
				})
			}
			target := markPath("nobody")
			requireError(t, h.call(t, dev, "POST", target, map[string]any{"messageId": msgs[0], "markAs": "read"}, nil),
				http.StatusNotFound, "POST", target)
		})

		t.Run("mark-all", func(t *testing.T) {
			target := "/v1/subscribers/ops/messages/mark-all"
			res := h.call(t, dev, "POST", target, map[string]any{"markAs": "seen"}, nil)
			require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
			require.EqualValues(t, 3, res.JSON(t), "the messages it changed")
			require.EqualValues(t, 0, unseen("ops"))
			require.EqualValues(t, 1, unseen("other"), "another subscriber's messages are untouched")
			require.Empty(t, contents(t, h.feed(t, "ops", url.Values{"read": {"true"}})))
			res = h.call(t, dev, "POST", target, map[string]any{"markAs": "read"}, nil)
			require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
			require.EqualValues(t, 4, res.JSON(t))
			for _, it := range h.feedItems(t, "ops") {
				require.Equal(t, true, it["read"])
				require.Equal(t, true, it["seen"])
			}
			for _, body := range []any{map[string]any{"markAs": "unread"}, map[string]any{}} {
				requireError(t, h.call(t, dev, "POST", target, body, nil), http.StatusUnprocessableEntity, "POST", target, "markAs")
			}
		})

		t.Run("actions", func(t *testing.T) {
			target := "/v1/subscribers/ops/messages/" + msgs[1] + "/actions/primary"
			res := h.call(t, dev, "POST", target, map[string]any{"status": "done", "payload": map[string]any{"answer": 42}}, nil)
			require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
			cta := res.Object(t)["cta"].(map[string]any)
			require.Equal(t, "redirect", cta["type"])
			require.NotContains(t, cta["data"], "url", "the step has no redirect of its own: the button's stays the button's")
			url := objects(t, cta["action"].(map[string]any)["buttons"])[0]["url"].(string)
			require.Regexp(t, `^https://app\.example/posts/p\d$`, url, "the button's redirect is kept")
			require.JSONEq(t, `{"status":"done","buttons":[{"type":"primary","content":"Open Rust","url":"`+url+`"},`+
				`{"type":"secondary","content":"Dismiss"}],"result":{"type":"primary","payload":{"answer":42}}}`,
				mustJSON(t, cta["action"]), "the buttons are kept")
			var fed map[string]any
			for _, it := range h.feedItems(t, "ops") {
				if it["_id"] == msgs[1] {
					fed = it
				}
			}
			require.Equal(t, res.Object(t)["cta"], fed["cta"], "the feed shows the action")
			res = h.call(t, dev, "POST", "/v1/subscribers/ops/messages/"+msgs[1]+"/actions/secondary", map[string]any{"status": "pending"}, nil)
			require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
			action := res.Object(t)["cta"].(map[string]any)["action"].(map[string]any)
			require.Equal(t, "pending", action["status"])
			require.Equal(t, map[string]any{"type": "secondary"}, action["result"])
			require.Len(t, action["buttons"], 2)

			for _, c := range []struct {
				name, target string
				body         any
				status       int
				fields       []string
			}{
				{"unknown type", "/v1/subscribers/ops/messages/" + msgs[1] + "/actions/tertiary", map[string]any{"status": "done"}, 422, []string{"type"}},
				{"malformed id", "/v1/subscribers/ops/messages/xyz/actions/primary", map[string]any{"status": "done"}, 422, []string{"messageId"}},
				{"unknown status", "/v1/subscribers/ops/messages/" + msgs[1] + "/actions/primary", map[string]any{"status": "clicked"}, 422, []string{"status"}},
				{"payload not an object", "/v1/subscribers/ops/messages/" + msgs[1] + "/actions/primary", map[string]any{"status": "done", "payload": 1}, 422, []string{"payload"}},
				{"another subscriber's message", "/v1/subscribers/ops/messages/" + otherMsg + "/actions/primary", map[string]any{"status": "done"}, 404, nil},
				{"unknown subscriber", "/v1/subscribers/nobody/messages/" + msgs[1] + "/actions/primary", map[string]any{"status": "done"}, 404, nil},
			} {
				t.Run(c.name, func(t *testing.T) {
					requireError(t, h.call(t, dev, "POST", c.target, c.body, nil), c.status, "POST", c.target, c.fields...)
				})
			}
		})

		t.Run("delete", func(t *testing.T) {
			target := "/v1/messages/" + msgs[2]
			requireError(t, h.call(t, h.authFor(asProd), "DELETE", target, nil, nil), http.StatusNotFound, "DELETE", target)
			res := h.call(t, dev, "DELETE", target, nil, nil)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
			require.Equal(t, map[string]any{"acknowledged": true, "status": "deleted"}, res.Object(t))
			requireError(t, h.call(t, dev, "DELETE", target, nil, nil), http.StatusNotFound, "DELETE", target)
			page := h.feed(t, "ops", nil)
			require.NotContains(t, ids(objects(t, page["data"])), msgs[2])
			require.EqualValues(t, 3, page["totalCount"])
			res = h.call(t, dev, "POST", markPath("ops"), map[string]any{"messageId": msgs[2], "markAs": "unseen"}, nil)
			require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
			require.Empty(t, res.Array(t), "a deleted message is not marked")
			requireError(t, h.call(t, dev, "DELETE", "/v1/messages/nope", nil, nil), http.StatusUnprocessableEntity, "DELETE",
				"/v1/messages/nope", "messageId")
		})
	})
}

// TestNotificationList covers the filters and paging of GET /v1/notifications.
func TestNotificationList(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		comment := h.createWorkflow(t, dev, commentWorkflow())
		h.createWorkflow(t, dev, plainWorkflow("Plain"))
		h.createSubscriber(t, dev, map[string]any{"subscriberId": "la", "email": "la@example.com"})
		h.trigger(t, dev, map[string]any{"name": "comment-posted", "to": []any{"la", "lb"}, "transactionId": "tx-1", "payload": commentPayload("x")})
		h.trigger(t, dev, map[string]any{"name": "plain", "to": "la", "transactionId": "tx-2", "payload": map[string]any{"n": 1}})
		h.trigger(t, dev, map[string]any{"name": "plain", "to": "lc", "transactionId": "tx-3", "payload": map[string]any{"n": 2}})

		txs := func(q url.Values) []string {
			t.Helper()
			var out []string
			for _, n := range objects(t, h.events(t, q)["data"]) {
				out = append(out, n["transactionId"].(string)+":"+n["subscriber"].(map[string]any)["subscriberId"].(string))
			}
			return out
		}
		require.ElementsMatch(t, []string{"tx-1:la", "tx-1:lb", "tx-2:la", "tx-3:lc"}, txs(nil))
		require.ElementsMatch(t, []string{"tx-1:la", "tx-1:lb"}, txs(url.Values{"channels": {"email"}}))
		require.ElementsMatch(t, []string{"tx-1:la", "tx-1:lb"}, txs(url.Values{"templates": {"comment-posted"}}))
		require.ElementsMatch(t, []string{"tx-1:la", "tx-1:lb"}, txs(url.Values{"templates": {comment["_id"].(string)}}))
		require.ElementsMatch(t, []string{"tx-1:la", "tx-2:la"}, txs(url.Values{"emails": {"la@example.com"}}))
		require.ElementsMatch(t, []string{"tx-1:lb", "tx-3:lc"}, txs(url.Values{"subscriberIds": {"lb,lc"}}))
		require.ElementsMatch(t, []string{"tx-1:lb", "tx-3:lc"}, txs(url.Values{"subscriberIds[]": {"lb", "lc"}}))
		require.ElementsMatch(t, []string{"tx-2:la"}, txs(url.Values{"transactionId": {"tx-2"}}))
		require.ElementsMatch(t, []string{"tx-2:la"}, txs(url.Values{"transactionId": {"tx-2"}, "channels": {"in_app"}}))
		require.Empty(t, txs(url.Values{"transactionId": {"tx-2"}, "channels": {"sms"}}))
		require.Empty(t, txs(url.Values{"after": {"2999-01-01T00:00:00Z"}}))
		require.Len(t, txs(url.Values{"before": {"2999-01-01T00:00:00.000Z"}, "after": {"2000-01-01T00:00:00Z"}}), 4)

		seen := map[string]bool{}
		for page := 0; page < 3; page++ {
			body := h.events(t, url.Values{"limit": {"3"}, "page": {strconv.Itoa(page)}})
			data := objects(t, body["data"])
			require.Equal(t, page == 0, body["hasMore"], "page %d", page)
			require.EqualValues(t, page, body["page"])
			for _, n := range data {
				require.False(t, seen[n["_id"].(string)], "an event on two pages")
				seen[n["_id"].(string)] = true
			}
		}
		require.Len(t, seen, 4)

		for _, c := range []struct {
			query  string
			fields []string
		}{
			{"limit=0", []string{"limit"}},
			{"limit=101", []string{"limit"}},
			{"page=-1", []string{"page"}},
			{"channels=fax", []string{"channels"}},
			{"after=yesterday", []string{"after"}},
			{"before=2020-13-01", []string{"before"}},
		} {
			target := "/v1/notifications?" + c.query
			requireError(t, h.call(t, dev, "GET", target, nil, nil), http.StatusUnprocessableEntity, "GET", target, c.fields...)
		}
		target := "/v1/notifications/nope"
		requireError(t, h.call(t, dev, "GET", target, nil, nil), http.StatusUnprocessableEntity, "GET", target, "notificationId")
		target = "/v1/notifications/0123456789abcdef01234567"
		requireError(t, h.call(t, dev, "GET", target, nil, nil), http.StatusNotFound, "GET", target)
	})
}

// TestPipelineTenancy: another environment's key cannot read, change or
// detect this environment's inbox, messages and events, even for a
// subscriber of the same subscriberId.
func TestPipelineTenancy(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev, prod := h.authFor(asDev), h.authFor(asProd)
		eng := h.newEngine(engine.Options{})
		h.createWorkflow(t, dev, commentWorkflow())
		h.trigger(t, dev, map[string]any{"name": "comment-posted", "to": "ten", "payload": commentPayload("t"), "transactionId": "tx-ten"})
		drain(t, eng)
		items := h.feedItems(t, "ten")
		require.Len(t, items, 1)
		msgID, notificationID := items[0]["_id"].(string), items[0]["_notificationId"].(string)
		before := h.call(t, dev, "GET", "/v1/notifications/"+notificationID, nil, nil)

		absent := []struct{ method, target string }{
			{"GET", feedPath("ten", nil)},
			{"GET", "/v1/subscribers/ten/notifications/unseen"},
			{"POST", markPath("ten")},
			{"POST", "/v1/subscribers/ten/messages/mark-all"},
			{"POST", "/v1/subscribers/ten/messages/" + msgID + "/actions/primary"},
			{"DELETE", "/v1/messages/" + msgID},
			{"GET", "/v1/notifications/" + notificationID},
		}
		bodies := map[string]any{"POST": map[string]any{"messageId": msgID, "markAs": "read", "status": "done"}}
		check := func(t *testing.T) {
			for _, c := range absent {
				res := h.call(t, prod, c.method, c.target, bodies[c.method], nil)
				requireError(t, res, http.StatusNotFound, c.method, c.target)
			}
			res := h.call(t, prod, "GET", "/v1/notifications?transactionId=tx-ten", nil, nil)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
			require.Empty(t, res.Object(t)["data"])
			res = h.call(t, prod, "DELETE", "/v1/events/trigger/tx-ten", nil, nil)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
			require.Equal(t, false, res.JSON(t))
		}
		t.Run("no such subscriber there", check)

		// The same subscriberId in production is another subscriber.
		h.createSubscriber(t, prod, map[string]any{"subscriberId": "ten"})
		absent = absent[4:] // the subscriber paths now answer for production's own subscriber
		t.Run("the same subscriberId there", func(t *testing.T) {
			check(t)
			res := h.call(t, prod, "GET", feedPath("ten", nil), nil, nil)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
			require.Empty(t, res.Object(t)["data"])
			require.EqualValues(t, 0, res.Object(t)["totalCount"])
			res = h.call(t, prod, "POST", markPath("ten"), map[string]any{"messageId": msgID, "markAs": "read"}, nil)
			require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
			require.Empty(t, res.Array(t))
			res = h.call(t, prod, "POST", "/v1/subscribers/ten/messages/mark-all", map[string]any{"markAs": "read"}, nil)
			require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
			require.EqualValues(t, 0, res.JSON(t))
			res = h.call(t, prod, "GET", "/v1/subscribers/ten/notifications/unseen", nil, nil)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
			require.EqualValues(t, 0, res.Object(t)["count"])
		})

		after := h.feedItems(t, "ten")
		require.Len(t, after, 1)
		require.Equal(t, false, after[0]["read"])
		require.Equal(t, false, after[0]["seen"])
		require.Equal(t, items[0]["cta"], after[0]["cta"])
		require.JSONEq(t, string(before.Raw), string(h.call(t, dev, "GET", "/v1/notifications/"+notificationID, nil, nil).Raw))
	})
}

// TestRequiredEnumsRejectNull: a required enumeration sent as null is a 422
// naming it, never a 500.
func TestRequiredEnumsRejectNull(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "sqlite")
	require.Equal(t, 201, h.Do("POST", "/v2/subscribers", map[string]any{"subscriberId": "ada"}).Status)
	for _, tc := range []struct {
		name, path string
		body       map[string]any
		field      string
	}{
		{"mark-as", "/v1/subscribers/ada/messages/mark-as", map[string]any{"messageId": "5f9d1c2e3a4b5c6d7e8f9a0b", "markAs": nil}, "markAs"},
		{"mark-all", "/v1/subscribers/ada/messages/mark-all", map[string]any{"markAs": nil}, "markAs"},
		{"action", "/v1/subscribers/ada/messages/5f9d1c2e3a4b5c6d7e8f9a0b/actions/primary", map[string]any{"status": nil}, "status"},
		{"workflow step", "/v2/workflows", map[string]any{"name": "x", "steps": []any{map[string]any{"name": "s", "type": nil}}}, "steps.0.type"},
	} {
		res := h.Do("POST", tc.path, tc.body)
		require.Equal(t, 422, res.Status, "%s: %s", tc.name, res.Raw)
		require.Contains(t, res.Object(t)["errors"], tc.field, tc.name)
	}
}
