package httpapi_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/engine"
)

func TestTriggerToTopicsHTTP(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev, prod := h.authFor(asDev), h.authFor(asProd)
		eng := h.newEngine(engine.Options{FanoutBatch: 2})
		h.createWorkflow(t, dev, map[string]any{"name": "News", "workflowId": "news", "steps": []any{
			map[string]any{"name": "Inbox", "type": "in_app", "controlValues": map[string]any{"body": "Hi {{subscriber.firstName}}"}}}})
		for _, sid := range []string{"ada", "bob", "cy", "dee", "eve"} {
			h.createSubscriber(t, dev, map[string]any{"subscriberId": sid, "firstName": sid})
		}
		h.createSubscriber(t, prod, map[string]any{"subscriberId": "ada", "firstName": "prod-ada"})
		for key, members := range map[string][]string{"team": {"ada", "bob", "cy"}, "ops": {"cy", "dee", "eve"}} {
			res := h.call(t, dev, "POST", "/v2/topics/"+key+"/subscriptions", map[string]any{"subscriptions": members}, nil)
			require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
		}

		out := h.trigger(t, dev, map[string]any{"name": "news", "transactionId": "tx-topics", "actor": "eve", "to": []any{
			"bob", map[string]any{"type": "Topic", "topicKey": "team"},
			map[string]any{"type": "Topic", "topicKey": "ops", "exclude": []string{"dee"}},
			map[string]any{"type": "Topic", "topicKey": "nobody-made-this"},
		}})
		require.Equal(t, true, out["acknowledged"])
		require.Equal(t, "processed", out["status"])
		drain(t, eng)
		for sid, want := range map[string]int{"ada": 1, "bob": 1, "cy": 1, "dee": 0, "eve": 0} {
			require.Len(t, h.feedItems(t, sid), want, sid)
		}
		require.Equal(t, "Hi ada", h.feedItems(t, "ada")[0]["content"])
		events := objects(t, h.events(t, url.Values{"transactionId": {"tx-topics"}})["data"])
		require.Len(t, events, 3, "one event per recipient")

		// A topic recipient must be well formed.
		for _, bad := range []any{
			map[string]any{"type": "Topic"},
			map[string]any{"type": "Topic", "topicKey": "has space"},
			map[string]any{"type": "Topic", "topicKey": "team", "exclude": "ada"},
			map[string]any{"type": "Topic", "topicKey": "team", "exclude": []any{""}},
		} {
			res := h.call(t, dev, "POST", "/v1/events/trigger", map[string]any{"name": "news", "to": []any{bad}}, nil)
			require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%v: %s", bad, res.Raw)
		}

		// Broadcast: every subscriber of the environment once, the actor left out.
		res := h.call(t, dev, "POST", "/v1/events/trigger/broadcast", map[string]any{"name": "news", "actor": "cy",
			"transactionId": "tx-all", "payload": map[string]any{"k": 1}}, nil)
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
		require.Equal(t, "tx-all", res.Object(t)["transactionId"])
		drain(t, eng)
		for sid, want := range map[string]int{"ada": 2, "bob": 2, "cy": 1, "dee": 1, "eve": 1} {
			require.Len(t, h.feedItems(t, sid), want, sid)
		}
		require.Equal(t, http.StatusConflict, h.call(t, dev, "POST", "/v1/events/trigger/broadcast",
			map[string]any{"name": "news", "transactionId": "tx-all"}, nil).Status, "a used transactionId")
		require.Equal(t, http.StatusUnprocessableEntity, h.call(t, dev, "POST", "/v1/events/trigger/broadcast",
			map[string]any{"name": "no-such-workflow"}, nil).Status)
		require.Equal(t, 0, h.count(t, "SELECT count(*) FROM messages WHERE environment_id <> (SELECT environment_id FROM messages LIMIT 1)"),
			"nothing reached the other environment")
	})
}
