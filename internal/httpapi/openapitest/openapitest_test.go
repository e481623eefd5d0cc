package openapitest

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCheck(t *testing.T) {
	t.Parallel()
	json := http.Header{"Content-Type": {"application/json; charset=utf-8"}}
	require.NoError(t, Check("GET", "/health", 200, json, []byte(`{"status":"ok"}`)))
	require.Error(t, Check("GET", "/health", 200, json, []byte(`{"status":"ok","extra":1}`)), "closed schema")
	require.Error(t, Check("GET", "/health", 200, http.Header{"Content-Type": {"text/plain"}}, []byte(`{}`)))
	require.Error(t, Check("GET", "/health", 418, json, []byte(`{}`)), "undocumented status")
	require.NoError(t, Check("GET", "/nowhere", 404, json, nil), "the catch-all")
	require.Error(t, Check("GET", "/nowhere", 200, json, []byte(`{}`)))

	preflight := http.Header{"Access-Control-Allow-Methods": {"GET, POST"}}
	require.NoError(t, Check("OPTIONS", "/v1/inbox/session?x=1", 204, preflight, nil), "a preflight")
	require.Error(t, Check("OPTIONS", "/v1/inbox/session", 200, preflight, []byte(`{}`)))
	require.Error(t, Check("OPTIONS", "/v1/inbox/session", 204, http.Header{}, nil), "a preflight names the methods")
}
