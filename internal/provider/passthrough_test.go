package provider

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSplitPassthrough(t *testing.T) {
	over := map[string]any{"categories": []any{"a"}, "_passthrough": map[string]any{
		"body":    map[string]any{"categories": []any{"b"}, "asm": map[string]any{"group_id": 7.0}},
		"headers": map[string]any{"X-One": "1", "X-Two": 2.0, "X-Obj": map[string]any{}},
		"query":   map[string]any{"q": "v"},
	}}
	body, pass := SplitPassthrough(over)
	require.Equal(t, map[string]any{"categories": []any{"b"}, "asm": map[string]any{"group_id": 7.0}}, body, "body laid over the overrides")
	require.Equal(t, map[string]string{"X-One": "1", "X-Two": "2"}, pass.Headers)
	require.Equal(t, map[string]string{"q": "v"}, pass.Query)
	require.Contains(t, over, "_passthrough", "the overrides given are not changed")

	plain := map[string]any{"x": 1.0}
	body, pass = SplitPassthrough(plain)
	require.Equal(t, plain, body)
	require.Empty(t, pass.Headers)
	body, _ = SplitPassthrough(map[string]any{"x": 1.0, "_passthrough": "not an object"})
	require.Equal(t, plain, body)
}

func TestDoAppliesPassthrough(t *testing.T) {
	var got *http.Request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = r.Clone(context.Background()) }))
	defer srv.Close()
	req, err := JSONRequest(srv.URL+"/send?keep=1", map[string]any{}, nil)
	require.NoError(t, err)
	ctx := WithPassthrough(context.Background(), Passthrough{
		Headers: map[string]string{"x-custom": "yes", "Bad Name": "x", "X-Split": "a\r\nInjected: 1"},
		Query:   map[string]string{"trace": "on"},
	})
	_, err = Do(ctx, srv.Client(), req)
	require.NoError(t, err)
	require.Equal(t, "yes", got.Header.Get("X-Custom"))
	require.Empty(t, got.Header.Get("Injected"), "a value with a line break is not sent")
	require.Empty(t, got.Header.Get("X-Split"))
	require.Equal(t, "1", got.URL.Query().Get("keep"), "the provider's own query stays")
	require.Equal(t, "on", got.URL.Query().Get("trace"))

	// Without a passthrough the request is as built.
	_, err = Do(context.Background(), srv.Client(), req)
	require.NoError(t, err)
	require.Empty(t, got.Header.Get("X-Custom"))
	require.Empty(t, got.URL.Query().Get("trace"))
}
