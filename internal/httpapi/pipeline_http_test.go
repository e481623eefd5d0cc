package httpapi_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/engine"
	"github.com/herald-notify/herald/internal/id"
)

// commentWorkflow is a two-step workflow whose controls are Liquid templates
// over the subscriber and the payload.
func commentWorkflow() map[string]any {
	return map[string]any{
		"name": "Comment posted", "workflowId": "comment-posted", "tags": []string{"social"},
		"description": "Someone commented", "unknownField": "ignored",
		"steps": []any{
			map[string]any{"name": "Inbox", "type": "in_app", "controlValues": map[string]any{
				"subject": "Hi {{subscriber.firstName}}",
				"body":    "{{payload.author}} commented on {{payload.post.title}}: {{payload.text}}",
				"avatar":  "https://cdn.example/{{payload.author}}.png",
				"primaryAction": map[string]any{"label": "Open {{payload.post.title}}",
					"redirect": map[string]any{"url": "https://app.example/posts/{{payload.post.id}}"}},
				"secondaryAction": map[string]any{"label": "Dismiss"},
				"data":            map[string]any{"postId": "{{payload.post.id}}", "who": "{{subscriber.subscriberId}}"},
			}},
			map[string]any{"name": "Email", "type": "email", "controlValues": map[string]any{
				"subject": "{{payload.author}} commented", "body": "Hello {{subscriber.firstName}}",
			}},
		},
	}
}

func commentPayload(post string) map[string]any {
	return map[string]any{"author": "Eve", "text": "Nice!", "post": map[string]any{"id": post, "title": "Rust"}}
}

// TestPipelineEndToEnd follows events from workflow creation through the
// trigger, the workers, the feed and mark-as to the retrieved event, on
// both stores.
func TestPipelineEndToEnd(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		eng := h.newEngine(engine.Options{})
		ada := h.createSubscriber(t, dev, map[string]any{"subscriberId": "ada", "firstName": "Ada", "lastName": "Lovelace",
			"email": "ada@example.com"})

		wf := h.createWorkflow(t, dev, commentWorkflow())
		require.Equal(t, "comment-posted", wf["workflowId"])
		require.Equal(t, true, wf["active"])
		steps := objects(t, wf["steps"])
		require.Len(t, steps, 2)
		for i, typ := range []string{"in_app", "email"} {
			require.Equal(t, typ, steps[i]["type"])
			require.True(t, id.Valid(steps[i]["_id"].(string)), "%v", steps[i])
			require.NotEmpty(t, steps[i]["stepId"])
		}
		got := h.call(t, dev, "GET", "/v2/workflows/comment-posted", nil, nil)
		require.Equal(t, http.StatusOK, got.Status, "%s", got.Raw)
		require.Equal(t, wf["_id"], got.Object(t)["_id"])

		// `to` as a subscriberId, with an actor given by subscriberId.
		tr := h.trigger(t, dev, map[string]any{"name": "comment-posted", "to": "ada", "payload": commentPayload("p1"),
			"transactionId": "tx-ada-1", "actor": "eve"})
		require.Equal(t, "tx-ada-1", tr["transactionId"])

		// Before the workers run: the event exists, its first step queued, the feed is empty.
		list := objects(t, h.events(t, url.Values{"transactionId": {"tx-ada-1"}})["data"])
		require.Len(t, list, 1)
		notificationID := list[0]["_id"].(string)
		var statuses []any
		require.NotContains(t, list[0], "jobs", "the listing shows event triggers; their jobs come with the event")
		for _, j := range objects(t, h.event(t, notificationID)["jobs"]) {
			statuses = append(statuses, j["status"])
		}
		require.Equal(t, []any{"queued", "pending"}, statuses)
		require.Empty(t, h.feedItems(t, "ada"))

		require.Equal(t, 2, drain(t, eng), "one job per step")
		items := h.feedItems(t, "ada")
		require.Len(t, items, 1, "the email step creates no feed item")
		m := items[0]
		require.Equal(t, "Eve commented on Rust: Nice!", m["content"])
		require.Equal(t, "Hi Ada", m["subject"])
		// The button's redirect is the button's; the step has no redirect of its own (cta.data).
		require.JSONEq(t, `{"type":"redirect","data":{},"action":{"status":"pending",`+
			`"buttons":[{"type":"primary","content":"Open Rust","url":"https://app.example/posts/p1"},{"type":"secondary","content":"Dismiss"}]}}`, mustJSON(t, m["cta"]))
		require.JSONEq(t, `{"postId":"p1","who":"ada"}`, mustJSON(t, m["data"]))
		require.JSONEq(t, mustJSON(t, commentPayload("p1")), mustJSON(t, m["payload"]))
		require.Equal(t, map[string]any{"type": "user", "data": nil}, m["actor"])
		require.Equal(t, "in_app", m["channel"])
		require.Equal(t, "svc", m["providerId"])
		require.Equal(t, "sent", m["status"])
		require.Equal(t, "comment-posted", m["templateIdentifier"])
		require.Equal(t, wf["_id"], m["_templateId"])
		require.Equal(t, "tx-ada-1", m["transactionId"])
		require.Equal(t, notificationID, m["_notificationId"])
		require.Equal(t, ada["_id"], m["_subscriberId"])
		require.Equal(t, []any{"social"}, m["tags"])
		require.Equal(t, false, m["read"])
		require.Equal(t, false, m["seen"])
		require.Equal(t, false, m["archived"])
		sub := m["subscriber"].(map[string]any)
		require.Equal(t, "ada", sub["subscriberId"])
		require.Equal(t, "Ada", sub["firstName"])
		msgID := m["_id"].(string)

		// Mark-as, flag by flag (docs/api-behaviour.md, "Inbox"): read sets seen, unread keeps it.
		mark := func(markAs string, messageID any) []map[string]any {
			t.Helper()
			res := h.call(t, dev, "POST", markPath("ada"), map[string]any{"messageId": messageID, "markAs": markAs}, nil)
			require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
			return objects(t, res.JSON(t))
		}
		flags := func(m map[string]any) [2]any { return [2]any{m["read"], m["seen"]} }
		for _, c := range []struct {
			markAs     string
			read, seen bool
		}{
			{"seen", false, true},
			{"unseen", false, false},
			{"read", true, true},
			{"unread", false, true},
			{"unseen", false, false},
			{"read", true, true},
		} {
			out := mark(c.markAs, msgID)
			require.Len(t, out, 1, c.markAs)
			require.Equal(t, [2]any{c.read, c.seen}, flags(out[0]), "after %s", c.markAs)
			require.Equal(t, [2]any{c.read, c.seen}, flags(h.feedItems(t, "ada")[0]), "the feed after %s", c.markAs)
		}
		final := mark("read", []string{msgID})[0]
		require.Contains(t, final, "lastReadDate")
		require.Contains(t, final, "lastSeenDate")

		// The retrieved event: jobs in step order, honest statuses, details oldest first.
		ev := h.event(t, notificationID)
		require.Equal(t, notificationID, ev["_id"])
		require.Equal(t, "tx-ada-1", ev["transactionId"])
		require.Equal(t, wf["_id"], ev["_templateId"])
		require.Equal(t, ada["_id"], ev["_subscriberId"])
		require.Equal(t, []any{"in_app", "email"}, ev["channels"])
		require.Equal(t, "ada", ev["subscriber"].(map[string]any)["subscriberId"])
		require.Equal(t, "ada@example.com", ev["subscriber"].(map[string]any)["email"])
		tpl := ev["template"].(map[string]any)
		require.Equal(t, "Comment posted", tpl["name"])
		require.Equal(t, "comment-posted", objects(t, tpl["triggers"])[0]["identifier"])
		require.JSONEq(t, mustJSON(t, commentPayload("p1")), mustJSON(t, ev["payload"]))
		require.JSONEq(t, `{"subscriberId":"ada"}`, mustJSON(t, ev["to"]))
		jobs := objects(t, ev["jobs"])
		require.Len(t, jobs, 2)

		inApp, email := jobs[0], jobs[1]
		require.Equal(t, "in_app", inApp["type"])
		require.Equal(t, "completed", inApp["status"])
		require.Equal(t, "svc", inApp["providerId"])
		require.Equal(t, steps[0]["_id"], inApp["step"].(map[string]any)["_id"])
		require.Equal(t, []detailSummary{{"Pending", "Internal"}, {"Success", "Internal"}}, jobDetails(t, inApp))
		success := objects(t, inApp["executionDetails"])[1]
		require.Contains(t, success["raw"], msgID, "the success detail names the message")
		require.Equal(t, false, success["isRetry"])

		require.Equal(t, "email", email["type"])
		require.Equal(t, "failed", email["status"], "no active e-mail integration: never a faked success")
		require.Equal(t, "svc-email", email["providerId"])
		require.Equal(t, steps[1]["_id"], email["step"].(map[string]any)["_id"])
		require.Equal(t, []detailSummary{{"Pending", "Internal"}, {"Failed", "Internal"}}, jobDetails(t, email))
		require.Equal(t, "Subscriber does not have an active integration", objects(t, email["executionDetails"])[1]["detail"])

		// `to` as a subscriber object: upserted with its attributes; the actor's avatar is the actor's data.
		h.trigger(t, dev, map[string]any{"name": "comment-posted", "payload": commentPayload("p2"),
			"to":    map[string]any{"subscriberId": "bob", "firstName": "Bob", "email": "bob@example.com", "data": map[string]any{"plan": "pro"}},
			"actor": map[string]any{"subscriberId": "eve", "avatar": "https://cdn.example/eve.png"}})
		require.Equal(t, 2, drain(t, eng))
		bob := h.getSubscriber(t, "bob")
		require.Equal(t, "Bob", bob["firstName"])
		require.Equal(t, "bob@example.com", bob["email"])
		bobItems := h.feedItems(t, "bob")
		require.Len(t, bobItems, 1)
		require.Equal(t, "Hi Bob", bobItems[0]["subject"])
		require.Equal(t, map[string]any{"type": "user", "data": "https://cdn.example/eve.png"}, bobItems[0]["actor"])

		// `to` as an array of both kinds; the transactionId is generated.
		tr = h.trigger(t, dev, map[string]any{"name": "comment-posted", "payload": commentPayload("p3"),
			"to": []any{"ada", map[string]any{"subscriberId": "carol", "firstName": "Carol"}, "dave"}})
		generated := tr["transactionId"].(string)
		require.NotEmpty(t, generated)
		require.Len(t, objects(t, h.events(t, url.Values{"transactionId": {generated}})["data"]), 3, "one notification per recipient")
		require.Equal(t, 6, drain(t, eng))
		adaItems := h.feedItems(t, "ada")
		require.Len(t, adaItems, 2)
		require.Equal(t, generated, adaItems[0]["transactionId"], "newest first")
		require.Equal(t, msgID, adaItems[1]["_id"])
		require.Equal(t, "Hi Carol", h.feedItems(t, "carol")[0]["subject"])
		dave := h.feedItems(t, "dave")
		require.Len(t, dave, 1, "an unknown subscriberId is created bare")
		require.Equal(t, "Hi ", dave[0]["subject"], "absent attributes render empty")
		require.Equal(t, "dave", dave[0]["subscriber"].(map[string]any)["subscriberId"])

		// Nothing ran twice: one message per in_app job.
		require.Equal(t, 5, h.count(t, "SELECT count(*) FROM messages"))
		require.Equal(t, 5, h.count(t, "SELECT count(DISTINCT job_id) FROM messages"))
		require.Equal(t, 0, drain(t, eng))
	})
}

// TestTriggerOutcomes covers the trigger's answers beside the normal case:
// unknown and inactive workflows, a reused transactionId, bulk triggers and
// the validation of `to`.
func TestTriggerOutcomes(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		eng := h.newEngine(engine.Options{})
		h.createWorkflow(t, dev, commentWorkflow())
		h.createWorkflow(t, dev, map[string]any{"name": "Dormant", "active": false,
			"steps": []any{map[string]any{"name": "Inbox", "type": "in_app", "controlValues": map[string]any{"body": "zzz"}}}})

		t.Run("unknown workflow", func(t *testing.T) {
			res := h.call(t, dev, "POST", "/v1/events/trigger", map[string]any{"name": "nope", "to": "ada"}, nil)
			requireError(t, res, http.StatusUnprocessableEntity, "POST", "/v1/events/trigger", "name")
		})
		t.Run("inactive workflow", func(t *testing.T) {
			res := h.call(t, dev, "POST", "/v1/events/trigger", map[string]any{"name": "dormant", "to": "sleepy",
				"transactionId": "tx-dormant"}, nil)
			require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
			out := res.Object(t)
			require.Equal(t, "trigger_not_active", out["status"])
			require.Equal(t, true, out["acknowledged"])
			require.Empty(t, objects(t, h.events(t, url.Values{"transactionId": {"tx-dormant"}})["data"]))
			require.Equal(t, 0, h.count(t, "SELECT count(*) FROM jobs WHERE transaction_id = 'tx-dormant'"))
			requireError(t, h.call(t, dev, "GET", subPath("sleepy"), nil, nil), http.StatusNotFound, "GET", subPath("sleepy"))
		})
		t.Run("reused transactionId", func(t *testing.T) {
			body := map[string]any{"name": "comment-posted", "to": "ada", "payload": commentPayload("p1"), "transactionId": "tx-once"}
			h.trigger(t, dev, body)
			res := h.call(t, dev, "POST", "/v1/events/trigger", body, nil)
			requireError(t, res, http.StatusConflict, "POST", "/v1/events/trigger")
			body["to"] = "someone-else"
			requireError(t, h.call(t, dev, "POST", "/v1/events/trigger", body, nil), http.StatusConflict, "POST", "/v1/events/trigger")
			drain(t, eng)
			require.Equal(t, 1, h.count(t, "SELECT count(*) FROM notifications WHERE transaction_id = 'tx-once'"))
			require.Equal(t, 1, h.count(t, "SELECT count(*) FROM messages WHERE transaction_id = 'tx-once'"))
			// Another environment has its own transactionIds.
			prod := h.authFor(asProd)
			h.createWorkflow(t, prod, commentWorkflow())
			h.trigger(t, prod, body)
		})
		t.Run("bulk", func(t *testing.T) {
			res := h.call(t, dev, "POST", "/v1/events/trigger/bulk", map[string]any{"events": []any{
				map[string]any{"name": "comment-posted", "to": "bulk-1", "payload": commentPayload("b1"), "transactionId": "tx-bulk-1"},
				map[string]any{"name": "nope", "to": "bulk-2", "transactionId": "tx-bulk-2"},
				map[string]any{"name": "comment-posted", "to": []any{"bulk-2", "bulk-3"}, "payload": commentPayload("b3")},
				map[string]any{"name": "dormant", "to": "bulk-4", "transactionId": "tx-bulk-4"},
			}}, nil)
			require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
			out := objects(t, res.JSON(t))
			require.Len(t, out, 4)
			require.Equal(t, []any{true, false, true, true},
				[]any{out[0]["acknowledged"], out[1]["acknowledged"], out[2]["acknowledged"], out[3]["acknowledged"]})
			require.Equal(t, []any{"processed", "error", "processed", "trigger_not_active"},
				[]any{out[0]["status"], out[1]["status"], out[2]["status"], out[3]["status"]})
			require.Equal(t, "tx-bulk-1", out[0]["transactionId"])
			drain(t, eng)
			for sid, n := range map[string]int{"bulk-1": 1, "bulk-2": 1, "bulk-3": 1} {
				require.Len(t, h.feedItems(t, sid), n, sid)
			}
			requireError(t, h.call(t, dev, "GET", subPath("bulk-4"), nil, nil), http.StatusNotFound, "GET", subPath("bulk-4"))

			// A malformed event rejects the whole request, naming its fields.
			res = h.call(t, dev, "POST", "/v1/events/trigger/bulk", map[string]any{"events": []any{
				map[string]any{"name": "comment-posted", "to": "ok"},
				map[string]any{"name": "comment-posted"},
			}}, nil)
			requireError(t, res, http.StatusUnprocessableEntity, "POST", "/v1/events/trigger/bulk", "events.1.to")
			requireError(t, h.call(t, dev, "GET", subPath("ok"), nil, nil), http.StatusNotFound, "GET", subPath("ok"))
			events := make([]any, 101)
			for i := range events {
				events[i] = map[string]any{"name": "comment-posted", "to": "x"}
			}
			requireError(t, h.call(t, dev, "POST", "/v1/events/trigger/bulk", map[string]any{"events": events}, nil),
				http.StatusUnprocessableEntity, "POST", "/v1/events/trigger/bulk", "events")
		})
		t.Run("validation", func(t *testing.T) {
			tooMany := make([]any, 101)
			for i := range tooMany {
				tooMany[i] = "r"
			}
			for _, c := range []struct {
				name   string
				body   any
				status int
				fields []string
			}{
				{"no to", map[string]any{"name": "comment-posted"}, 422, []string{"to"}},
				{"no name", map[string]any{"to": "a"}, 422, []string{"name"}},
				{"empty to", map[string]any{"name": "comment-posted", "to": []any{}}, 422, []string{"to"}},
				{"101 recipients", map[string]any{"name": "comment-posted", "to": tooMany}, 422, []string{"to"}},
				{"bad recipient", map[string]any{"name": "comment-posted", "to": []any{"a", 7, map[string]any{"firstName": "x"}}}, 422,
					[]string{"to.1", "to.2.subscriberId"}},
				{"bad email", map[string]any{"name": "comment-posted", "to": map[string]any{"subscriberId": "x", "email": "nope"}}, 422,
					[]string{"to.email"}},
				{"payload not an object", map[string]any{"name": "comment-posted", "to": "a", "payload": []int{1}}, 422, []string{"payload"}},
				{"NUL in the payload", `{"name":"comment-posted","to":"a","payload":{"k":["\u0000"]}}`, 422, []string{"payload"}},
				{"NUL in a payload key", `{"name":"comment-posted","to":"a","payload":{"k\u0000":1}}`, 422, []string{"payload"}},
				{"not JSON", "{", 400, nil},
			} {
				t.Run(c.name, func(t *testing.T) {
					res := h.call(t, dev, "POST", "/v1/events/trigger", c.body, nil)
					requireError(t, res, c.status, "POST", "/v1/events/trigger", c.fields...)
				})
			}
			require.Equal(t, 0, h.count(t, "SELECT count(*) FROM subscribers WHERE subscriber_id IN ('a', 'x')"))
		})
	})
}

// TestTriggerCancel cancels an event before the workers run: its jobs end
// canceled, with a Warning detail each, and no message is created.
func TestTriggerCancel(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		eng := h.newEngine(engine.Options{})
		h.createWorkflow(t, dev, commentWorkflow())
		h.trigger(t, dev, map[string]any{"name": "comment-posted", "to": []any{"c1", "c2"}, "payload": commentPayload("p"),
			"transactionId": "tx/cancel me"})
		h.trigger(t, dev, map[string]any{"name": "comment-posted", "to": "c1", "payload": commentPayload("q"), "transactionId": "tx-keep"})

		target := "/v1/events/trigger/" + url.PathEscape("tx/cancel me")
		cancel := func(auth string) any {
			t.Helper()
			res := h.call(t, auth, "DELETE", target, nil, nil)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
			return res.JSON(t)
		}
		require.Equal(t, false, cancel(h.authFor(asProd)), "another environment's key cancels nothing")
		require.Equal(t, true, cancel(dev))
		require.Equal(t, false, cancel(dev), "nothing is left to cancel")

		require.Equal(t, 2, drain(t, eng), "only the other event's jobs run")
		require.Equal(t, 0, h.count(t, "SELECT count(*) FROM messages WHERE transaction_id = 'tx/cancel me'"))
		require.Len(t, h.feedItems(t, "c1"), 1)
		require.Empty(t, h.feedItems(t, "c2"))
		list := objects(t, h.events(t, url.Values{"transactionId": {"tx/cancel me"}})["data"])
		require.Len(t, list, 2)
		for _, n := range list {
			jobs := objects(t, h.event(t, n["_id"].(string))["jobs"])
			require.Len(t, jobs, 2)
			for _, j := range jobs {
				require.Equal(t, "canceled", j["status"])
				require.Equal(t, []detailSummary{{"Pending", "Internal"}, {"Warning", "Internal"}}, jobDetails(t, j))
			}
		}
		// A run event has nothing left to cancel.
		res := h.call(t, dev, "DELETE", "/v1/events/trigger/tx-keep", nil, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		require.Equal(t, false, res.JSON(t))
	})
}

// TestRenderFailure: a template that fails to render with the event's
// payload (one that does not parse is refused at creation) fails its job
// with a Failed execution detail whose source is Payload, and creates no
// message.
func TestRenderFailure(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		eng := h.newEngine(engine.Options{})
		h.createWorkflow(t, dev, map[string]any{"name": "Broken", "steps": []any{
			map[string]any{"name": "Inbox", "type": "in_app", "controlValues": map[string]any{"body": "{{ payload.bad | base64_decode }}"}},
			map[string]any{"name": "Inbox 2", "type": "in_app", "controlValues": map[string]any{"body": "fine {{payload.x}}"}},
		}})
		h.trigger(t, dev, map[string]any{"name": "broken", "to": "r1", "payload": map[string]any{"x": 1, "bad": "!!"}, "transactionId": "tx-broken"})
		require.Equal(t, 2, drain(t, eng))
		list := objects(t, h.events(t, url.Values{"transactionId": {"tx-broken"}})["data"])
		require.Len(t, list, 1)
		jobs := objects(t, h.event(t, list[0]["_id"].(string))["jobs"])
		require.Equal(t, "failed", jobs[0]["status"])
		require.Equal(t, []detailSummary{{"Pending", "Internal"}, {"Failed", "Payload"}}, jobDetails(t, jobs[0]))
		require.Equal(t, "completed", jobs[1]["status"], "the next step still runs")
		items := h.feedItems(t, "r1")
		require.Len(t, items, 1)
		require.Equal(t, "fine 1", items[0]["content"])
	})
}
