package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// refs are the subscriberIds of a bulk answer's created or updated list.
func refs(t testing.TB, v any) []string {
	out := []string{}
	for _, o := range objects(t, v) {
		out = append(out, o["subscriberId"].(string))
	}
	return out
}

func TestSubscribersBulkHTTP(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev, prod := h.authFor(asDev), h.authFor(asProd)
		ada := h.createSubscriber(t, dev, map[string]any{"subscriberId": "ada", "firstName": "Ada", "email": "ada@example.com"})

		res := h.call(t, dev, "POST", "/v1/subscribers/bulk", map[string]any{"subscribers": []any{
			map[string]any{"subscriberId": "ada", "lastName": "Lovelace"},
			map[string]any{"subscriberId": "new-1", "firstName": "N1", "email": "n1@example.com", "data": map[string]any{"plan": "pro"}},
			map[string]any{"subscriberId": "new-2", "locale": "en-GB", "timezone": "Europe/London"},
			map[string]any{"subscriberId": "new-1", "firstName": "N1b"},
		}}, nil)
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
		out := res.Object(t)
		require.Equal(t, []string{"new-1", "new-2"}, refs(t, out["created"]))
		require.Equal(t, []string{"ada", "new-1"}, refs(t, out["updated"]), "every other item, in request order")
		require.Empty(t, out["failed"])

		got := h.call(t, dev, "GET", subPath("ada"), nil, nil).Object(t)
		require.Equal(t, ada["_id"], got["_id"])
		require.Equal(t, "Ada", got["firstName"], "fields not sent stay")
		require.Equal(t, "Lovelace", got["lastName"])
		require.Equal(t, "ada@example.com", got["email"])
		got = h.call(t, dev, "GET", subPath("new-1"), nil, nil).Object(t)
		require.Equal(t, "N1b", got["firstName"])
		require.Equal(t, "n1@example.com", got["email"])
		require.Equal(t, map[string]any{"plan": "pro"}, got["data"])
		require.Equal(t, http.StatusNotFound, h.call(t, prod, "GET", subPath("new-1"), nil, nil).Status, "only the caller's environment")

		// Bad requests name the offending items and write nothing.
		item := map[string]any{"subscriberId": "x"}
		many := make([]any, 501)
		for i := range many {
			many[i] = item
		}
		for _, c := range []struct {
			name   string
			body   any
			status int
			fields []string
		}{
			{"no subscribers", map[string]any{}, 422, []string{"subscribers"}},
			{"empty", map[string]any{"subscribers": []any{}}, 422, []string{"subscribers"}},
			{"501", map[string]any{"subscribers": many}, 422, []string{"subscribers"}},
			{"not an array", map[string]any{"subscribers": "ada"}, 422, []string{"subscribers"}},
			{"item without subscriberId", map[string]any{"subscribers": []any{item, map[string]any{"firstName": "F"}}}, 422,
				[]string{"subscribers.1.subscriberId"}},
			{"item not an object", map[string]any{"subscribers": []any{item, "bob", nil}}, 422, []string{"subscribers.1", "subscribers.2"}},
			{"bad attributes", map[string]any{"subscribers": []any{item, map[string]any{"subscriberId": "..", "email": "nope",
				"timezone": "Mars/Base", "data": []int{1}}}}, 422,
				[]string{"subscribers.1.subscriberId", "subscribers.1.email", "subscribers.1.timezone", "subscribers.1.data"}},
			{"not JSON", "{", 400, nil},
		} {
			res := h.call(t, dev, "POST", "/v1/subscribers/bulk", c.body, nil)
			require.Equal(t, c.status, res.Status, "%s: %s", c.name, res.Raw)
			if c.fields != nil {
				errs := res.Object(t)["errors"].(map[string]any)
				for _, f := range c.fields {
					require.Contains(t, errs, f, c.name)
				}
			}
		}
		require.Equal(t, http.StatusNotFound, h.call(t, dev, "GET", subPath("x"), nil, nil).Status, "nothing was created")
	})
}

// TestSubscribersBulkConcurrentHTTP: bulk requests naming the same new
// subscribers at once create each one once, and each request's answer
// lists every item once.
func TestSubscribersBulkConcurrentHTTP(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		const requests, ids = 5, 60
		bodies := make([]map[string]any, requests)
		for r := range bodies {
			var items []any
			for i := range ids {
				k := (i*7 + r*11) % ids // each request in its own order
				items = append(items, map[string]any{"subscriberId": fmt.Sprint("race-", k), "firstName": fmt.Sprint("r", r)})
			}
			bodies[r] = map[string]any{"subscribers": items}
		}
		answers := make([]response, requests)
		done := make(chan int)
		for r := range bodies {
			go func() {
				answers[r] = h.serve(newRequest(t, dev, "POST", "/v1/subscribers/bulk", bodies[r], nil))
				done <- r
			}()
		}
		for range requests {
			<-done
		}
		created := map[string]int{}
		for r, res := range answers {
			require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
			validateResponse(t, docProbe(newRequest(t, dev, "POST", "/v1/subscribers/bulk", nil, nil)), res)
			out := res.Object(t)
			require.Len(t, append(refs(t, out["created"]), refs(t, out["updated"])...), ids, "request %d lists every item", r)
			for _, sid := range refs(t, out["created"]) {
				created[sid]++
			}
		}
		require.Len(t, created, ids)
		for sid, n := range created {
			require.Equal(t, 1, n, "%s created once", sid)
		}
		require.Equal(t, ids, h.count(t, "SELECT count(*) FROM subscribers WHERE subscriber_id LIKE 'race-%'"))
	})
}

func TestSubscriberOnlineStatusHTTP(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev, prod := h.authFor(asDev), h.authFor(asProd)
		h.createSubscriber(t, dev, map[string]any{"subscriberId": "ada b", "firstName": "Ada"})
		path := "/v1/subscribers/ada%20b/online-status"

		res := h.call(t, dev, "PATCH", path, map[string]any{"isOnline": true}, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		s := res.Object(t)
		require.Equal(t, true, s["isOnline"])
		require.Nil(t, s["lastOnlineAt"])
		require.Equal(t, "Ada", s["firstName"])

		res = h.call(t, dev, "PATCH", path, map[string]any{"isOnline": false}, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		s = res.Object(t)
		require.Equal(t, false, s["isOnline"])
		offAt, _ := s["lastOnlineAt"].(string)
		require.Regexp(t, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`, offAt)
		got := h.call(t, dev, "GET", subPath("ada b"), nil, nil).Object(t)
		require.Equal(t, false, got["isOnline"])
		require.Equal(t, offAt, got["lastOnlineAt"])

		for _, c := range []struct {
			name, auth, path string
			body             any
			status           int
		}{
			{"unknown subscriber", dev, "/v1/subscribers/nobody/online-status", map[string]any{"isOnline": true}, 404},
			{"another environment", prod, path, map[string]any{"isOnline": true}, 404},
			{"missing isOnline", dev, path, map[string]any{}, 422},
			{"null isOnline", dev, path, map[string]any{"isOnline": nil}, 422},
			{"string isOnline", dev, path, map[string]any{"isOnline": "true"}, 422},
			{"no body", dev, path, nil, 400},
			{"dot subscriberId", dev, "/v1/subscribers/%2E/online-status", map[string]any{"isOnline": true}, 422},
		} {
			res := h.call(t, c.auth, "PATCH", c.path, c.body, nil)
			require.Equal(t, c.status, res.Status, "%s: %s", c.name, res.Raw)
			if c.status == 404 {
				require.True(t, strings.Contains(string(res.Raw), "was not found"), "%s", res.Raw)
			}
		}
		require.Equal(t, false, h.call(t, dev, "GET", subPath("ada b"), nil, nil).Object(t)["isOnline"], "refused requests changed nothing")
	})
}
