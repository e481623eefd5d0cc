package httpapi_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSmokeSubscriberRoundTrip(t *testing.T) {
	forEachStore(t, func(t *testing.T, h *harness) {
		res := h.Do("POST", "/v2/subscribers", map[string]any{"subscriberId": "u-1", "email": "ada@example.com"})
		require.Equal(t, 201, res.Status, string(res.Raw))
		res = h.Do("GET", "/v2/subscribers?email=ada", nil)
		require.Equal(t, 200, res.Status, string(res.Raw))
		require.EqualValues(t, 1, res.Object(t)["totalCount"])
		res = h.Do("GET", "/v1/integrations/active", nil)
		require.Equal(t, 200, res.Status, string(res.Raw))
		res = h.DoAs("Bearer "+h.Session("development"), "GET", "/v1/integrations/active", nil, nil)
		require.Equal(t, 200, res.Status, string(res.Raw))
		res = h.DoAs("", "GET", "/v2/subscribers", nil, nil)
		require.Equal(t, 401, res.Status, string(res.Raw))
	})
}
