package httpapi_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/engine"
)

// TestMessageShapes: one in-app message, seen through every route that
// writes it — the realtime notification_received event over socket.io and
// over Server-Sent Events, the v1 feed, GET /v1/messages and the v2
// notifications — has the same value in every field two shapes share, and
// every answer and event matches its schema in the OpenAPI document (the
// harness and decodeEvent validate them). A value the message does not have
// is null in the feed and the event, and left out of the messages API.
func TestMessageShapes(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		srv := withRealtime(t, h)
		dev := h.authFor(asDev)
		token := h.openSession(t, h.identifierOf(t, dev), h.DevKey,
			map[string]any{"subscriberId": "shape-1", "firstName": "Ada"})["token"].(string)
		sock, stream := dialSocket(t, srv, token), openEvents(t, srv, token)
		h.createWorkflow(t, dev, map[string]any{"name": "Rich", "workflowId": "shape-rich", "severity": "high",
			"tags": []string{"orders"}, "steps": []any{map[string]any{"name": "Inbox", "type": "in_app",
				"controlValues": map[string]any{"subject": "Hi {{subscriber.firstName}}", "body": "Shipped",
					"avatar": "https://x.test/a.png", "data": map[string]any{"order": 17.0},
					"redirect":        map[string]any{"url": "https://x.test/orders/17", "target": "_blank"},
					"primaryAction":   map[string]any{"label": "Track", "redirect": map[string]any{"url": "https://x.test/track"}},
					"secondaryAction": map[string]any{"label": "Dismiss"}}}}})
		h.createWorkflow(t, dev, map[string]any{"name": "Bare", "workflowId": "shape-bare", "steps": []any{
			map[string]any{"name": "Inbox", "type": "in_app", "controlValues": map[string]any{"body": "Plain"}}}})
		eng := h.newEngine(engine.Options{})

		for _, tc := range []struct {
			workflow string
			check    func(t *testing.T, received, feed, message, notification map[string]any)
		}{
			{"shape-rich", func(t *testing.T, received, feed, message, notification map[string]any) {
				require.Equal(t, "Hi Ada", received["subject"])
				require.Equal(t, "https://x.test/a.png", received["avatar"])
				require.Equal(t, map[string]any{"order": 17.0}, received["data"])
				require.Equal(t, []any{"orders"}, received["tags"])
				require.Equal(t, "high", received["severity"])
				cta := received["cta"].(map[string]any)
				require.Equal(t, map[string]any{"url": "https://x.test/orders/17", "target": "_blank"}, cta["data"])
				require.Len(t, cta["action"].(map[string]any)["buttons"], 2)
				require.Equal(t, "Track", notification["primaryAction"].(map[string]any)["label"])
				require.Equal(t, map[string]any{"url": "https://x.test/orders/17", "target": "_blank"}, notification["redirect"])
			}},
			{"shape-bare", func(t *testing.T, received, feed, message, notification map[string]any) {
				for _, shape := range []map[string]any{received, feed} {
					require.Contains(t, shape, "subject")
					require.Nil(t, shape["subject"], "null where the shape types it T | null")
				}
				require.NotContains(t, message, "subject", "left out where it is optional")
				require.NotContains(t, notification, "subject")
				require.Nil(t, received["avatar"])
				for _, shape := range []map[string]any{received, feed, message} {
					require.Equal(t, map[string]any{}, shape["cta"], "the stored cta: the step has none")
				}
				require.Equal(t, map[string]any{}, received["data"])
				require.Equal(t, []any{}, received["tags"])
				require.Equal(t, "none", received["severity"])
			}},
		} {
			t.Run(tc.workflow, func(t *testing.T) {
				h.trigger(t, dev, map[string]any{"name": tc.workflow, "to": "shape-1", "transactionId": "tx-" + tc.workflow})
				drain(t, eng)
				viaSocket := sock.expect(newMessageEvents...)[0]
				viaStream := stream.expect(newMessageEvents...)[0]
				require.JSONEq(t, string(viaSocket.Raw), string(viaStream.Raw), "one payload on both transports")
				received := viaSocket.Data["message"].(map[string]any)
				mid := received["_id"].(string)

				feed := findByKey(t, h.feedItems(t, "shape-1"), "_id", mid)
				res := h.call(t, dev, "GET", "/v1/messages?"+url.Values{"subscriberId": {"shape-1"}, "limit": {"100"}}.Encode(), nil, nil)
				require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
				message := findByKey(t, objects(t, res.Object(t)["data"]), "_id", mid)
				res = h.call(t, dev, "GET", "/v2/subscribers/shape-1/notifications?limit=100", nil, nil)
				require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
				notification := findByKey(t, objects(t, res.Object(t)["data"]), "id", mid)

				for name, shape := range map[string]map[string]any{"feed item": feed, "message": message} {
					shared := 0
					for k, v := range received {
						if w, ok := shape[k]; ok {
							require.Equal(t, v, w, "%s of the event and of the %s", k, name)
							shared++
						}
					}
					require.GreaterOrEqual(t, shared, 9, "the %s shares the v1 message's base fields", name)
				}
				for k, v := range feed {
					if w, ok := message[k]; ok {
						require.Equal(t, v, w, "%s of the feed item and of the message", k)
					}
				}
				require.Equal(t, []any{received["createdAt"]}, received["deliveredAt"])
				for from, to := range map[string]string{"content": "body", "createdAt": "createdAt", "transactionId": "transactionId",
					"workflow": "workflow", "severity": "severity"} {
					require.Equal(t, received[from], notification[to], "%s of the event, %s of the notification", from, to)
				}
				tc.check(t, received, feed, message, notification)
			})
		}
	})
}

// findByKey is the item whose key has the value v.
func findByKey(t *testing.T, items []map[string]any, key string, v any) map[string]any {
	t.Helper()
	for _, it := range items {
		if it[key] == v {
			return it
		}
	}
	require.Failf(t, "not found", "no item with %s %v in %v", key, v, items)
	return nil
}
