package resend

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/email/resend/resendfake"
	"github.com/herald-notify/herald/internal/provider/providertest"
)

func sendTo(t *testing.T, f providertest.Fake, creds provider.Credentials, m *provider.Message) (*provider.Result, error) {
	t.Helper()
	s, err := New(providertest.Config(f, creds, true))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return s.Send(ctx, m)
}

func TestARetriedSendIsOneEmail(t *testing.T) {
	t.Parallel()
	f := resendfake.New()
	defer f.Close()
	m := providertest.Canonical(provider.Email, 1)
	first, err := sendTo(t, f, f.Credentials(), m)
	require.NoError(t, err)
	again, err := sendTo(t, f, f.Credentials(), m)
	require.NoError(t, err)
	require.Equal(t, first.ProviderMessageID, again.ProviderMessageID, "Resend answers the first id")
	require.Len(t, f.Received(), 1, "and sends nothing the second time")
	require.Equal(t, 2, f.Requests())

	// The same key with another payload is refused for good.
	changed := providertest.Canonical(provider.Email, 1)
	changed.Subject = "Something else"
	_, err = sendTo(t, f, f.Credentials(), changed)
	pe := provider.AsError(err)
	require.Equal(t, provider.Permanent, pe.Class)
	require.Equal(t, http.StatusConflict, pe.Status)
	require.Contains(t, pe.Reason, "invalid_idempotent_request")
	require.Len(t, f.Received(), 1)
}

func TestLongIdempotencyKeyIsHashed(t *testing.T) {
	t.Parallel()
	f := resendfake.New()
	defer f.Close()
	m := providertest.Canonical(provider.Email, 1)
	m.IdempotencyKey = strings.Repeat("k", 300)
	_, err := sendTo(t, f, f.Credentials(), m)
	require.NoError(t, err)
	got := f.Received()
	require.Len(t, got, 1)
	require.Len(t, got[0].IdempotencyKey, 64)
	require.Equal(t, idempotencyKey(m.IdempotencyKey), got[0].IdempotencyKey)
}

func TestConcurrentIdempotentRequestIsTransient(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusConflict)
		_, _ = w.Write([]byte(`{"statusCode":409,"name":"concurrent_idempotent_requests","message":"Same idempotency key used while original request is still in progress."}`))
	}))
	defer srv.Close()
	f := resendfake.New()
	defer f.Close()
	creds := f.Credentials()
	creds["baseUrl"] = srv.URL
	_, err := sendTo(t, f, creds, providertest.Canonical(provider.Email, 1))
	pe := provider.AsError(err)
	require.Equal(t, provider.Transient, pe.Class, pe.Error())
	require.Contains(t, pe.Reason, "concurrent_idempotent_requests")
}

func TestMissingAPIKeyIsPermanent(t *testing.T) {
	t.Parallel()
	f := resendfake.New()
	defer f.Close()
	creds := f.Credentials()
	creds["apiKey"] = ""
	_, err := sendTo(t, f, creds, providertest.Canonical(provider.Email, 1))
	pe := provider.AsError(err)
	require.Equal(t, provider.Permanent, pe.Class)
	require.Equal(t, http.StatusUnauthorized, pe.Status)
	require.Contains(t, pe.Reason, "missing_api_key")
}
