package onesignal_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/providertest"
	"github.com/herald-notify/herald/internal/provider/push"
	"github.com/herald-notify/herald/internal/provider/push/onesignal"
	"github.com/herald-notify/herald/internal/provider/push/onesignal/onesignalfake"
)

func send(t *testing.T, f *onesignalfake.Fake, creds provider.Credentials, m *provider.Message) (*provider.Result, error) {
	t.Helper()
	s, err := onesignal.New(providertest.Config(f, creds, true))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return s.Send(ctx, m)
}

func message(n int, tokens ...string) *provider.Message {
	m := providertest.Canonical(provider.Push, n)
	m.Tokens = tokens
	return m
}

func TestIdempotencyKey(t *testing.T) {
	t.Parallel()
	f := onesignalfake.New()
	defer f.Close()
	m := message(1, onesignalfake.Token(1))
	first, err := send(t, f, f.Credentials(), m)
	require.NoError(t, err)
	again, err := send(t, f, f.Credentials(), m)
	require.NoError(t, err, "a retry of the same delivery")
	require.Equal(t, first.ProviderMessageID, again.ProviderMessageID, "OneSignal replays the first answer")
	got := f.Received()
	require.Len(t, got, 1, "no second delivery for a repeated key")
	key := got[0].IdempotencyKey
	require.True(t, push.IsUUID(key), "OneSignal takes UUID keys only: %q", key)
	require.Equal(t, onesignal.IdempotencyKey(m.IdempotencyKey), key)
	require.Equal(t, "Key os_v2_app_heraldfakekey7q2w3e4r5t6y7u8i9o0p", got[0].Header.Get("Authorization"))

	// Another delivery has another key.
	_, err = send(t, f, f.Credentials(), message(2, onesignalfake.Token(1)))
	require.NoError(t, err)
	require.Len(t, f.Received(), 2)

	// A key that already is a UUID goes as it is.
	m = message(3, onesignalfake.Token(1))
	m.IdempotencyKey = "0b7c3f4e-2d1a-4c5b-8e9f-a1b2c3d4e5f6"
	_, err = send(t, f, f.Credentials(), m)
	require.NoError(t, err)
	require.Equal(t, m.IdempotencyKey, f.Received()[2].IdempotencyKey)
}

func TestUnsubscribedRecipients(t *testing.T) {
	t.Parallel()
	f := onesignalfake.New()
	defer f.Close()
	a, b, c := onesignalfake.Token(1), onesignalfake.Token(2), onesignalfake.Token(3)
	f.Unsubscribe(b, c)

	res, err := send(t, f, f.Credentials(), message(1, a, b))
	require.NoError(t, err)
	require.Equal(t, []string{b}, res.InvalidTokens)
	got := f.Received()
	require.Len(t, got, 1)
	require.Equal(t, []string{a}, got[0].Tokens)
	require.Equal(t, got[0].MessageID, res.ProviderMessageID)

	_, err = send(t, f, f.Credentials(), message(2, b, c))
	pe := provider.AsError(err)
	require.Equal(t, provider.TokenInvalid, pe.Class, pe.Error())
	require.Equal(t, []string{b, c}, pe.InvalidTokens)
	require.Contains(t, pe.Reason, "not subscribed")
}

func TestLegacyDialect(t *testing.T) {
	t.Parallel()
	f := onesignalfake.New()
	defer f.Close()
	res, err := send(t, f, f.LegacyCredentials(), message(1, onesignalfake.Token(1)))
	require.NoError(t, err)
	got := f.Received()
	require.Len(t, got, 1)
	require.Equal(t, res.ProviderMessageID, got[0].MessageID)
	require.Contains(t, got[0].Header.Get("Authorization"), "Basic ")
	var body map[string]any
	require.NoError(t, json.Unmarshal(got[0].Body, &body))
	require.Equal(t, []any{onesignalfake.Token(1)}, body["include_player_ids"])
	require.NotContains(t, body, "include_subscription_ids")
}

func TestNoMessageCreated(t *testing.T) {
	t.Parallel()
	f := onesignalfake.New()
	defer f.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"","errors":["Notification content must not be null for any languages."]}`))
	}))
	defer srv.Close()
	creds := f.Credentials()
	creds["baseUrl"] = srv.URL
	_, err := send(t, f, creds, message(1, onesignalfake.Token(1)))
	pe := provider.AsError(err)
	require.Equal(t, provider.Permanent, pe.Class, "a 200 that created nothing, not about recipients")
	require.Contains(t, pe.Reason, "must not be null")
	require.Empty(t, pe.InvalidTokens)
}

func TestMalformedSubscriptionID(t *testing.T) {
	t.Parallel()
	f := onesignalfake.New()
	defer f.Close()
	_, err := send(t, f, f.Credentials(), message(1, "not-a-uuid"))
	pe := provider.AsError(err)
	require.Equal(t, provider.TokenInvalid, pe.Class)
	require.Equal(t, []string{"not-a-uuid"}, pe.InvalidTokens)
	require.Zero(t, f.Requests(), "OneSignal would refuse the whole request")

	res, err := send(t, f, f.Credentials(), message(2, "not-a-uuid", onesignalfake.Token(1)))
	require.NoError(t, err)
	require.Equal(t, []string{"not-a-uuid"}, res.InvalidTokens)
	require.Equal(t, []string{onesignalfake.Token(1)}, f.Received()[0].Tokens)
}
