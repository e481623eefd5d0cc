package httpapi_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestConcurrentCreatesYieldOneSubscriber(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		const n = 50
		reqs := make([]*http.Request, n)
		for i := range reqs {
			reqs[i] = newRequest(t, dev, "POST", "/v2/subscribers", map[string]any{"subscriberId": "race|1", "firstName": fmt.Sprint("n", i)}, nil)
		}
		ids := map[any]bool{}
		for i, res := range serveConcurrently(h, reqs) {
			validateResponse(t, docProbe(reqs[i]), res)
			require.Equal(t, 201, res.Status, "%s", res.Raw)
			ids[res.Object(t)["_id"]] = true
		}
		require.Len(t, ids, 1, "every create answered with the one subscriber")

		res := h.call(t, dev, "GET", "/v2/subscribers?subscriberId=race%7C1", nil, nil)
		require.EqualValues(t, 1, res.Object(t)["totalCount"])
		sub := h.getSubscriber(t, "race|1")
		require.EqualValues(t, n-1, sub["__v"], "one insert and n-1 updates")
	})
}

func TestConcurrentCredentialAppendsKeepEveryToken(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		h.createIntegration(t, dev, map[string]any{"providerId": "apns", "active": true})
		h.createSubscriber(t, dev, map[string]any{"subscriberId": "phone owner"})
		const n = 20
		reqs := make([]*http.Request, n)
		want := make([]string, n)
		for i := range reqs {
			want[i] = fmt.Sprintf("device-%02d", i)
			reqs[i] = newRequest(t, dev, "PATCH", credPath("phone owner"),
				map[string]any{"providerId": "apns", "credentials": map[string]any{"deviceTokens": []string{want[i], "shared"}}}, nil)
		}
		for i, res := range serveConcurrently(h, reqs) {
			validateResponse(t, docProbe(reqs[i]), res)
			require.Equal(t, 200, res.Status, "%s", res.Raw)
		}
		got := deviceTokens(t, h.getSubscriber(t, "phone owner"), "apns")
		require.ElementsMatch(t, append(want, "shared"), got, "no token lost, none duplicated")
		require.Len(t, h.getSubscriber(t, "phone owner")["channels"], 1, "one channel per integration")
	})
}
