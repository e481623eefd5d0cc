package httpapi_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestBodyLimitAndRouting(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		h.createSubscriber(t, h.authFor(asDev), map[string]any{"subscriberId": "big"})
		// A valid JSON document just over 1 MiB.
		huge := `{"subscriberId":"big","firstName":"` + repeat("x", 1<<20) + `"}`
		atLimit := `{"subscriberId":"big","data":{"x":"` + repeat("y", 1<<20-40) + `"}}`
		runScenarios(t, h, nil, []scenario{
			{name: "create over 1 MiB", method: "POST", url: "/v2/subscribers", body: huge, status: 413},
			{name: "patch over 1 MiB", method: "PATCH", url: "/v2/subscribers/big", body: huge, status: 413},
			{name: "credentials over 1 MiB", method: "PATCH", url: "/v1/subscribers/big/credentials", body: huge, status: 413},
			{name: "integration over 1 MiB", method: "POST", url: "/v1/integrations", body: huge, status: 413},
			{name: "over 1 MiB without a key is still a 413", method: "POST", url: "/v2/subscribers", auth: asNone, body: huge, status: 413},
			{name: "at the limit the body is read (and data is too large)", method: "POST", url: "/v2/subscribers", body: atLimit,
				status: 422, errorFields: []string{"data"}},

			{name: "unknown route", method: "GET", url: "/v3/subscribers", status: 404},
			{name: "unknown route without a key", method: "GET", url: "/nowhere", auth: asNone, status: 404},
			{name: "unknown sub-route", method: "GET", url: "/v2/subscribers/big/unknown", status: 404},
			{name: "trailing slash", method: "GET", url: "/v2/subscribers/", status: 404, catchAll: true},
			{name: "root", method: "GET", url: "/", status: 404},
			{name: "wrong method on a collection", method: "DELETE", url: "/v2/subscribers", status: 405, catchAll: true},
			{name: "wrong method on an item", method: "POST", url: "/v2/subscribers/big", status: 405},
			{name: "wrong method on credentials", method: "GET", url: "/v1/subscribers/big/credentials", status: 405},
			{name: "wrong method on integrations", method: "PATCH", url: "/v1/integrations", status: 405},
			{name: "wrong method on set-primary", method: "GET", url: "/v1/integrations/0123456789abcdef01234567/set-primary", status: 405},
			{name: "wrong method without a key", method: "PUT", url: "/v2/subscribers", auth: asNone, status: 405},
		})
		require.Nil(t, h.getSubscriber(t, "big")["firstName"], "nothing of a rejected body was written")
	})
}
