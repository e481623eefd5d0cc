package pushwebhook_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/providertest"
	"github.com/herald-notify/herald/internal/provider/push/pushwebhook"
	"github.com/herald-notify/herald/internal/provider/push/pushwebhook/pushwebhookfake"
)

func TestSignature(t *testing.T) {
	t.Parallel()
	// RFC 4231-style known answer for HMAC-SHA256.
	require.Equal(t, "f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8",
		pushwebhook.Sign("key", []byte("The quick brown fox jumps over the lazy dog")))
}

func send(t *testing.T, f *pushwebhookfake.Fake, creds provider.Credentials, m *provider.Message) (*provider.Result, error) {
	t.Helper()
	s, err := pushwebhook.New(providertest.Config(f, creds, true))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return s.Send(ctx, m)
}

func TestBodyAsNovuSendsIt(t *testing.T) {
	t.Parallel()
	f := pushwebhookfake.New()
	defer f.Close()
	m := providertest.Canonical(provider.Push, 1)
	m.Tokens = []string{"a", "b"}
	m.Overrides = map[string]any{"sound": "ping"}
	res, err := send(t, f, f.Credentials(), m)
	require.NoError(t, err)
	got := f.Received()
	require.Len(t, got, 1, "one call for every token")
	require.Equal(t, got[0].MessageID, res.ProviderMessageID)
	var body map[string]any
	require.NoError(t, json.Unmarshal(got[0].Body, &body))
	require.Equal(t, []any{"a", "b"}, body["target"])
	require.Equal(t, m.Subject, body["title"])
	require.Equal(t, m.Content, body["content"])
	require.Equal(t, map[string]any{"n": float64(1), "subscriber": map[string]any{"subscriberId": "ada"},
		"step": map[string]any{"stepId": "step"}}, body["payload"])
	require.Equal(t, map[string]any{"sound": "ping"}, body["overrides"])
	require.Equal(t, map[string]any{"postId": "42"}, body["data"])
	require.Equal(t, pushwebhook.Sign("pwh-hmac-secret-5d4c3b2a1908", got[0].Body), got[0].Header.Get("X-Novu-Signature"))
}

func TestStatuses(t *testing.T) {
	t.Parallel()
	f := pushwebhookfake.New()
	defer f.Close()
	for _, tc := range []struct {
		status int
		class  provider.Class
	}{{400, provider.Permanent}, {404, provider.Permanent}, {408, provider.Transient}, {429, provider.Transient},
		{500, provider.Transient}, {502, provider.Transient}} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(tc.status)
			_, _ = w.Write([]byte(`{"message":"status ` + strconv.Itoa(tc.status) + `"}`))
		}))
		creds := f.Credentials()
		creds["webhookUrl"] = srv.URL + "/hook?token=receiver-secret-123"
		m := providertest.Canonical(provider.Push, 1)
		m.Tokens = []string{"a"}
		_, err := send(t, f, creds, m)
		pe := provider.AsError(err)
		require.Equal(t, tc.class, pe.Class, "%d", tc.status)
		require.Equal(t, "status "+strconv.Itoa(tc.status), pe.Reason)
		srv.Close()
	}

	// A receiver that is gone: the URL (it may hold a token) is not shown.
	creds := f.Credentials()
	creds["webhookUrl"] = "http://127.0.0.1:1/hook?token=receiver-secret-123"
	m := providertest.Canonical(provider.Push, 1)
	m.Tokens = []string{"a"}
	_, err := send(t, f, creds, m)
	pe := provider.AsError(err)
	require.Equal(t, provider.Transient, pe.Class, pe.Error())
	require.NotContains(t, pe.Error(), "receiver-secret-123")
}

func TestWebhookURLMustBeHTTP(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"", "ftp://example.com/x", "/relative", "http://"} {
		_, err := pushwebhook.New(provider.Config{Credentials: provider.Credentials{"webhookUrl": u, "secretKey": "k"}})
		require.Error(t, err, u)
	}
}
