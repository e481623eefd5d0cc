package httpapi_test

import (
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/httpapi"
)

func idem(key string) map[string]string { return map[string]string{"Idempotency-Key": key} }

func TestIdempotency(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev, prod := h.authFor(asDev), h.authFor(asProd)

		t.Run("replay returns the same status and body", func(t *testing.T) {
			body := map[string]any{"subscriberId": "idem-1", "firstName": "Ada"}
			first := h.call(t, dev, "POST", "/v2/subscribers", body, idem("k-1"))
			require.Equal(t, 201, first.Status, "%s", first.Raw)
			require.Equal(t, "k-1", first.Header.Get("Idempotency-Key"))
			require.Empty(t, first.Header.Get("Idempotency-Replay"))

			// Change the subscriber in between: a replay is the stored answer, not a new one.
			require.Equal(t, 201, h.call(t, dev, "POST", "/v2/subscribers", map[string]any{"subscriberId": "idem-1", "firstName": "Grace"}, nil).Status)
			again := h.call(t, dev, "POST", "/v2/subscribers", body, idem("k-1"))
			require.Equal(t, 201, again.Status)
			require.Equal(t, string(first.Raw), string(again.Raw))
			require.Equal(t, "true", again.Header.Get("Idempotency-Replay"))
			require.Equal(t, "k-1", again.Header.Get("Idempotency-Key"))
			require.Equal(t, "Grace", h.getSubscriber(t, "idem-1")["firstName"], "the replay did not run the operation")
		})

		t.Run("errors are replayed too", func(t *testing.T) {
			body := map[string]any{"subscriberId": "idem-2", "email": "nope"}
			first := h.call(t, dev, "POST", "/v2/subscribers", body, idem("k-2"))
			requireError(t, first, 422, "POST", "/v2/subscribers", "email")
			again := h.call(t, dev, "POST", "/v2/subscribers", body, idem("k-2"))
			require.Equal(t, 422, again.Status)
			require.Equal(t, string(first.Raw), string(again.Raw))
			require.Equal(t, "true", again.Header.Get("Idempotency-Replay"))
		})

		t.Run("same key, different body", func(t *testing.T) {
			require.Equal(t, 201, h.call(t, dev, "POST", "/v2/subscribers", map[string]any{"subscriberId": "idem-3"}, idem("k-3")).Status)
			res := h.call(t, dev, "POST", "/v2/subscribers", map[string]any{"subscriberId": "idem-3b"}, idem("k-3"))
			requireError(t, res, 422, "POST", "/v2/subscribers", "idempotency-key")
			require.Equal(t, "k-3", res.Header.Get("Idempotency-Key"))
			require.Empty(t, res.Header.Get("Idempotency-Replay"))
			require.Equal(t, 404, h.call(t, dev, "GET", subPath("idem-3b"), nil, nil).Status, "the different request did not run")
		})

		t.Run("same key, different path or query", func(t *testing.T) {
			res := h.call(t, dev, "POST", "/v2/subscribers?failIfExists=false", map[string]any{"subscriberId": "idem-3"}, idem("k-3"))
			requireError(t, res, 422, "POST", "/v2/subscribers", "idempotency-key")
			res = h.call(t, dev, "PATCH", subPath("idem-3"), map[string]any{"subscriberId": "idem-3"}, idem("k-3"))
			requireError(t, res, 422, "PATCH", subPath("idem-3"), "idempotency-key")
		})

		t.Run("key longer than 255 characters", func(t *testing.T) {
			long := repeat("k", 256)
			res := h.call(t, dev, "POST", "/v2/subscribers", map[string]any{"subscriberId": "idem-4"}, idem(long))
			requireError(t, res, 400, "POST", "/v2/subscribers")
			require.Empty(t, res.Header.Get("Idempotency-Key"), "an invalid key is never echoed")
			require.Equal(t, 404, h.call(t, dev, "GET", subPath("idem-4"), nil, nil).Status)
			res = h.call(t, dev, "POST", "/v2/subscribers", map[string]any{"subscriberId": "idem-4"}, idem(repeat("k", 255)))
			require.Equal(t, 201, res.Status, "255 characters are fine")
		})

		t.Run("GET ignores the key", func(t *testing.T) {
			first := h.call(t, dev, "GET", "/v2/subscribers?subscriberId=idem-5", nil, idem("k-5"))
			require.Equal(t, 200, first.Status)
			require.Equal(t, "k-5", first.Header.Get("Idempotency-Key"))
			h.createSubscriber(t, dev, map[string]any{"subscriberId": "idem-5"})
			second := h.call(t, dev, "GET", "/v2/subscribers?subscriberId=idem-5", nil, idem("k-5"))
			require.Equal(t, 200, second.Status)
			require.Empty(t, second.Header.Get("Idempotency-Replay"))
			require.EqualValues(t, 1, second.Object(t)["totalCount"], "a fresh answer, not a replay")
			// An invalid key is ignored on a GET too: no 400, and not echoed.
			for _, bad := range []string{repeat("g", 300), "tab\tkey", "caf\u00e9"} {
				res := h.call(t, dev, "GET", "/v1/integrations/active", nil, idem(bad))
				require.Equal(t, 200, res.Status, "%q", bad)
				require.Empty(t, res.Header.Get("Idempotency-Key"), "%q", bad)
			}
			// And a key used by a GET is still free for a POST.
			res := h.call(t, dev, "POST", "/v2/subscribers", map[string]any{"subscriberId": "idem-5b"}, idem("k-5"))
			require.Equal(t, 201, res.Status)
			require.Empty(t, res.Header.Get("Idempotency-Replay"))
		})

		t.Run("every authenticated response echoes the key, no other does", func(t *testing.T) {
			for _, c := range []struct {
				auth, method, url string
				body              any
				status            int
				echoed            bool
			}{
				{dev, "POST", "/v2/subscribers", map[string]any{"subscriberId": "echo"}, 201, true},
				{dev, "POST", "/v2/subscribers", `{`, 400, true},
				{dev, "GET", subPath("nobody"), nil, 404, true},
				{dev, "PATCH", credPath("echo"), map[string]any{"providerId": "fcm", "credentials": map[string]any{}}, 422, true},
				{dev, "DELETE", subPath("echo"), nil, 200, true},
				{dev, "POST", "/v1/integrations", map[string]any{"providerId": "sendgrid"}, 201, true},
				// Unauthenticated answers: a missing or unknown key, and the
				// routes that never authenticate.
				{"", "POST", "/v2/subscribers", map[string]any{"subscriberId": "echo"}, 401, false},
				{"ApiKey hk_unknown", "POST", "/v2/subscribers", map[string]any{"subscriberId": "echo"}, 401, false},
				{dev, "GET", "/nowhere", nil, 404, false},
				{dev, "PUT", "/v2/subscribers", nil, 405, false},
				{"", "GET", "/health", nil, 200, false},
			} {
				key := fmt.Sprintf("echo-%s-%s-%d", c.method, c.url, c.status)
				res := h.call(t, c.auth, c.method, c.url, c.body, idem(key))
				require.Equal(t, c.status, res.Status, "%s %s: %s", c.method, c.url, res.Raw)
				if c.echoed {
					require.Equal(t, key, res.Header.Get("Idempotency-Key"), "%s %s", c.method, c.url)
				} else {
					require.Empty(t, res.Header.Get("Idempotency-Key"), "%s %s", c.method, c.url)
					require.NotContains(t, string(res.Raw), key)
				}
			}
		})

		t.Run("a key is validated only after authentication", func(t *testing.T) {
			for _, bad := range []string{repeat("k", 256), "bell\x07", "new\nline", "caf\u00e9", "del\x7f"} {
				res := h.call(t, "", "POST", "/v2/subscribers", map[string]any{"subscriberId": "idem-bad"}, idem(bad))
				requireError(t, res, 401, "POST", "/v2/subscribers")
				require.Empty(t, res.Header.Get("Idempotency-Key"))
				res = h.call(t, dev, "POST", "/v2/subscribers", map[string]any{"subscriberId": "idem-bad"}, idem(bad))
				requireError(t, res, 400, "POST", "/v2/subscribers")
				require.Empty(t, res.Header.Get("Idempotency-Key"), "%q is not echoed", bad)
			}
			require.Equal(t, 404, h.call(t, dev, "GET", subPath("idem-bad"), nil, nil).Status, "no bad-key request ran")
			// Every printable ASCII character is fine.
			var all []byte
			for c := byte(0x20); c <= 0x7e; c++ {
				all = append(all, c)
			}
			res := h.call(t, dev, "POST", "/v2/subscribers", map[string]any{"subscriberId": "idem-bad"}, idem(string(all)))
			require.Equal(t, 201, res.Status, "%s", res.Raw)
			require.Equal(t, string(all), res.Header.Get("Idempotency-Key"))
		})

		t.Run("the same JSON in another layout is the same request", func(t *testing.T) {
			first := h.call(t, dev, "POST", "/v2/subscribers",
				`{"subscriberId":"idem-canon","firstName":"Ada","data":{"b":[1,2.50,{"y":true,"x":null}],"a":"caf\u00e9"}}`, idem("canon-1"))
			require.Equal(t, 201, first.Status, "%s", first.Raw)
			for _, body := range []string{
				"{\n  \"data\": {\"a\": \"café\", \"b\": [ 1, 2.50, {\"x\": null, \"y\": true} ]},\n  \"firstName\": \"Ada\",\n  \"subscriberId\": \"idem-canon\"\n}\n",
				`  {"firstName":"Ada",  "subscriberId":"idem-canon","data":{"a":"caf\u00e9","b":[1,2.50,{"y":true,"x":null}]}}	`,
			} {
				again := h.call(t, dev, "POST", "/v2/subscribers", body, idem("canon-1"))
				require.Equal(t, 201, again.Status, "%s", again.Raw)
				require.Equal(t, "true", again.Header.Get("Idempotency-Replay"), "%s", body)
				require.Equal(t, string(first.Raw), string(again.Raw))
			}
			// Numbers keep their literal text, and values still count.
			for _, body := range []string{
				`{"subscriberId":"idem-canon","firstName":"Ada","data":{"b":[1,2.5,{"y":true,"x":null}],"a":"caf\u00e9"}}`,
				`{"subscriberId":"idem-canon","firstName":"Ada","data":{"b":[2.50,1,{"y":true,"x":null}],"a":"caf\u00e9"}}`,
				`{"subscriberId":"idem-canon","firstName":"Ada"}`,
			} {
				res := h.call(t, dev, "POST", "/v2/subscribers", body, idem("canon-1"))
				requireError(t, res, 422, "POST", "/v2/subscribers", "idempotency-key")
			}
			// A body that is not JSON is compared byte for byte.
			bad := h.call(t, dev, "POST", "/v2/subscribers", `{"subscriberId": `, idem("canon-2"))
			requireError(t, bad, 400, "POST", "/v2/subscribers")
			again := h.call(t, dev, "POST", "/v2/subscribers", `{"subscriberId": `, idem("canon-2"))
			require.Equal(t, "true", again.Header.Get("Idempotency-Replay"))
			res := h.call(t, dev, "POST", "/v2/subscribers", `{"subscriberId":`, idem("canon-2"))
			requireError(t, res, 422, "POST", "/v2/subscribers", "idempotency-key")
		})

		t.Run("keys are per environment", func(t *testing.T) {
			body := map[string]any{"subscriberId": "idem-env"}
			d := h.call(t, dev, "POST", "/v2/subscribers", body, idem("shared"))
			p := h.call(t, prod, "POST", "/v2/subscribers", body, idem("shared"))
			require.Equal(t, 201, d.Status)
			require.Equal(t, 201, p.Status)
			require.Empty(t, p.Header.Get("Idempotency-Replay"), "the production key does not replay the development answer")
			require.NotEqual(t, d.Object(t)["_environmentId"], p.Object(t)["_environmentId"])
			// A different body under the same key is fine in the other environment.
			require.Equal(t, 201, h.call(t, prod, "POST", "/v2/subscribers", body, idem("dev-only")).Status)
			res := h.call(t, dev, "POST", "/v2/subscribers", map[string]any{"subscriberId": "other"}, idem("dev-only"))
			require.Equal(t, 201, res.Status, "%s", res.Raw)
		})

		t.Run("PATCH, PUT and DELETE are idempotent too", func(t *testing.T) {
			h.createIntegration(t, dev, map[string]any{"providerId": "fcm", "active": true})
			h.createSubscriber(t, dev, map[string]any{"subscriberId": "idem-cred"})
			body := map[string]any{"providerId": "fcm", "credentials": map[string]any{"deviceTokens": []string{"t1"}}}
			first := h.call(t, dev, "PATCH", credPath("idem-cred"), body, idem("c-1"))
			require.Equal(t, 200, first.Status)
			again := h.call(t, dev, "PATCH", credPath("idem-cred"), body, idem("c-1"))
			require.Equal(t, string(first.Raw), string(again.Raw))
			require.Equal(t, "true", again.Header.Get("Idempotency-Replay"))
			require.EqualValues(t, first.Object(t)["__v"], h.getSubscriber(t, "idem-cred")["__v"], "the replay did not write")

			del := h.call(t, dev, "DELETE", subPath("idem-cred"), nil, idem("d-1"))
			require.Equal(t, 200, del.Status)
			del = h.call(t, dev, "DELETE", subPath("idem-cred"), nil, idem("d-1"))
			require.Equal(t, 200, del.Status, "a replayed DELETE answers as the first did")
			require.Equal(t, "true", del.Header.Get("Idempotency-Replay"))
		})

		t.Run("a session's answer is never replayed to an API key", func(t *testing.T) {
			body := map[string]any{"providerId": "sendgrid", "credentials": map[string]any{"apiKey": "SG.replayed-secret"}}
			session := h.authFor(asSession)
			first := h.call(t, session, "POST", "/v1/integrations", body, idem("sess-1"))
			require.Equal(t, 201, first.Status, "%s", first.Raw)
			require.Contains(t, string(first.Raw), "SG.replayed-secret")
			again := h.call(t, session, "POST", "/v1/integrations", body, idem("sess-1"))
			require.Equal(t, "true", again.Header.Get("Idempotency-Replay"))
			require.Equal(t, string(first.Raw), string(again.Raw), "a session replays its own answer")

			res := h.call(t, dev, "POST", "/v1/integrations", body, idem("sess-1"))
			requireError(t, res, 422, "POST", "/v1/integrations", "idempotency-key")
			require.NotContains(t, string(res.Raw), "SG.replayed-secret")

			// Nor is it stored in the clear.
			rows, err := h.DB.Reader().Query("SELECT body FROM idempotency_keys")
			require.NoError(t, err)
			defer rows.Close()
			for rows.Next() {
				var b []byte
				require.NoError(t, rows.Scan(&b))
				require.NotContains(t, string(b), "SG.replayed-secret")
			}
			require.NoError(t, rows.Err())
		})

		t.Run("concurrent requests with one key run once", func(t *testing.T) {
			before := len(h.call(t, dev, "GET", "/v1/integrations", nil, nil).Array(t))
			const n = 20
			reqs := make([]*http.Request, n)
			for i := range reqs {
				// No identifier: every run would create a new integration.
				reqs[i] = newRequest(t, dev, "POST", "/v1/integrations", map[string]any{"providerId": "sendgrid", "name": "Once"}, idem("race-1"))
			}
			results := serveConcurrently(h, reqs)
			var created []string
			for i, res := range results {
				validateResponse(t, docProbe(reqs[i]), res)
				require.Equal(t, "race-1", res.Header.Get("Idempotency-Key"))
				switch res.Status {
				case 201:
					created = append(created, string(res.Raw))
				case 409:
					require.Equal(t, "1", res.Header.Get("Retry-After"))
					requireErrorShape(t, res, "POST", "/v1/integrations")
				default:
					t.Fatalf("status %d: %s", res.Status, res.Raw)
				}
			}
			require.NotEmpty(t, created)
			for _, c := range created {
				require.Equal(t, created[0], c, "every 201 is the one response")
			}
			after := h.call(t, dev, "GET", "/v1/integrations", nil, nil).Array(t)
			require.Len(t, after, before+1, "the operation ran exactly once")
		})
	})
}

// serveConcurrently sends the requests at once and returns their responses
// in order; validate them afterwards, on the test goroutine.
func serveConcurrently(h *harness, reqs []*http.Request) []response {
	out := make([]response, len(reqs))
	var start, done sync.WaitGroup
	start.Add(1)
	for i, req := range reqs {
		done.Add(1)
		go func() {
			defer done.Done()
			start.Wait()
			out[i] = h.serve(req)
		}()
	}
	start.Done()
	done.Wait()
	return out
}

// TestIdempotencyPanicReleasesKey: a handler that panics answers the 500
// with an errorId, and its idempotency key is free at once for a retry (not
// held as "still running" until it goes stale). An aborted handler
// (http.ErrAbortHandler) frees its key too.
func TestIdempotencyPanicReleasesKey(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		srv := httpapi.New(httpapi.Options{Store: h.DB, Keys: h.Keys, Logger: testLogger(t)})
		var calls atomic.Int32
		srv.HandleForTest("POST /test/flaky/{how}", func(w http.ResponseWriter, r *http.Request) error {
			if calls.Add(1) == 1 {
				if r.PathValue("how") == "abort" {
					panic(http.ErrAbortHandler)
				}
				panic("flaky handler panicked")
			}
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.WriteHeader(http.StatusCreated)
			_, err := fmt.Fprintf(w, `{"call":%d}`, calls.Load())
			return err
		})
		h.Handler = srv
		dev := h.authFor(asDev)
		body := map[string]any{"n": 1}

		res := h.serve(newRequest(t, dev, "POST", "/test/flaky/panic", body, idem("panic-1")))
		require.Equal(t, 500, res.Status, "%s", res.Raw)
		validateErrorBody(t, res)
		errorID, _ := res.Object(t)["errorId"].(string)
		require.NotEmpty(t, errorID)
		require.NotContains(t, string(res.Raw), "flaky handler panicked", "no internal text in the body")
		require.Contains(t, logsOf(t), errorID)
		require.Contains(t, logsOf(t), "flaky handler panicked")

		retry := h.serve(newRequest(t, dev, "POST", "/test/flaky/panic", body, idem("panic-1")))
		require.Equal(t, 201, retry.Status, "the key was released: %s", retry.Raw)
		require.Empty(t, retry.Header.Get("Idempotency-Replay"))
		require.JSONEq(t, `{"call":2}`, string(retry.Raw))
		replay := h.serve(newRequest(t, dev, "POST", "/test/flaky/panic", body, idem("panic-1")))
		require.Equal(t, "true", replay.Header.Get("Idempotency-Replay"))
		require.JSONEq(t, `{"call":2}`, string(replay.Raw))

		calls.Store(0)
		func() {
			defer func() { require.Equal(t, http.ErrAbortHandler, recover()) }()
			h.serve(newRequest(t, dev, "POST", "/test/flaky/abort", body, idem("abort-1")))
		}()
		retry = h.serve(newRequest(t, dev, "POST", "/test/flaky/abort", body, idem("abort-1")))
		require.Equal(t, 201, retry.Status, "the key was released: %s", retry.Raw)
	})
}
