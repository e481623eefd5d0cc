package provider

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestUntrustedCertificateIsPermanent(t *testing.T) {
	t.Parallel()
	var hits int
	srv := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits++ }))
	defer srv.Close()
	req, err := JSONRequest(srv.URL+"/send", map[string]string{"a": "b"}, nil)
	require.NoError(t, err)
	_, err = Do(context.Background(), &http.Client{}, req)
	pe := AsError(err)
	require.Equal(t, Permanent, pe.Class, pe.Error())
	require.Zero(t, hits)
}

func TestStatusClasses(t *testing.T) {
	t.Parallel()
	for status, want := range map[int]Class{400: Permanent, 401: Permanent, 404: Permanent, 408: Transient, 409: Permanent,
		429: Transient, 500: Transient, 503: Transient} {
		r := &Response{Status: status, Header: http.Header{"Retry-After": {"7"}}}
		e := StatusError(r, "")
		require.Equal(t, want, e.Class, status)
		if want == Transient {
			require.Equal(t, 7*time.Second, e.RetryAfter)
		}
	}
	future := time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat)
	require.InDelta(t, 90, RetryAfter(http.Header{"Retry-After": {future}}, time.Now()).Seconds(), 2)
	require.Zero(t, RetryAfter(http.Header{"Retry-After": {"soon"}}, time.Now()))
}

func TestBaseURLAndMerge(t *testing.T) {
	t.Parallel()
	u, err := BaseURL(Credentials{"baseUrl": "https://proxy.example/api/"}, "https://default.example")
	require.NoError(t, err)
	require.Equal(t, "https://proxy.example/api", u)
	u, err = BaseURL(Credentials{}, "https://default.example")
	require.NoError(t, err)
	require.Equal(t, "https://default.example", u)
	_, err = BaseURL(Credentials{"baseUrl": "ftp://x"}, "https://default.example")
	require.Error(t, err)
	got := Merge(map[string]any{"a": 1, "o": map[string]any{"x": 1, "y": 2}}, map[string]any{"o": map[string]any{"y": 3}, "b": 2})
	require.Equal(t, map[string]any{"a": 1, "b": 2, "o": map[string]any{"x": 1, "y": 3}}, got)
	require.Equal(t, "x [redacted] y", Redact("x secret-value y", []string{"secret-value", "abc"}))
	require.Equal(t, "42", Path([]byte(`{"data":{"ids":[42]}}`), "data.ids.0"))
}
