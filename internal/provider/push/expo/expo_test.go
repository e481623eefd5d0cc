package expo_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/providertest"
	"github.com/herald-notify/herald/internal/provider/push/expo"
	"github.com/herald-notify/herald/internal/provider/push/expo/expofake"
)

func send(t *testing.T, cfg provider.Config, tokens ...string) (*provider.Result, error) {
	t.Helper()
	s, err := expo.New(cfg)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m := providertest.Canonical(provider.Push, 1)
	m.Tokens = tokens
	return s.Send(ctx, m)
}

func TestBatchesOfHundred(t *testing.T) {
	t.Parallel()
	f := expofake.New()
	defer f.Close()
	var tokens []string
	for i := range 250 {
		tokens = append(tokens, expofake.Token(i))
	}
	tokens = append(tokens, "fcm-token-not-expo")
	res, err := send(t, providertest.Config(f, f.Credentials(), true), tokens...)
	require.NoError(t, err)
	require.Equal(t, 3, f.Requests(), "100 + 100 + 50")
	got := f.Received()
	require.Len(t, got, 250)
	require.Equal(t, got[0].MessageID, res.ProviderMessageID)
	require.Equal(t, []string{expofake.Token(0)}, got[0].Tokens)
	require.Equal(t, []string{expofake.Token(249)}, got[249].Tokens)
	require.Equal(t, []string{"fcm-token-not-expo"}, res.InvalidTokens, "not an Expo token: never sent")
}

// scripted is a server answering every push request with status and body.
func scripted(t *testing.T, status int, body string) (provider.Config, func() http.Header) {
	t.Helper()
	var mu sync.Mutex
	var last http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		last = r.Header.Clone()
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	f := expofake.New()
	t.Cleanup(f.Close)
	cfg := providertest.Config(f, provider.Credentials{"baseUrl": srv.URL}, true)
	return cfg, func() http.Header {
		mu.Lock()
		defer mu.Unlock()
		return last
	}
}

func TestTickets(t *testing.T) {
	t.Parallel()
	a, b, c := expofake.Token(1), expofake.Token(2), expofake.Token(3)
	tickets := func(ts ...map[string]any) string {
		out, _ := json.Marshal(map[string]any{"data": ts})
		return string(out)
	}
	ok := func(id string) map[string]any { return map[string]any{"status": "ok", "id": id} }
	bad := func(code string) map[string]any {
		return map[string]any{"status": "error", "message": "refused", "details": map[string]any{"error": code}}
	}

	// Tickets answer the messages in order.
	cfg, header := scripted(t, 200, tickets(bad("DeviceNotRegistered"), ok("id-b"), ok("id-c")))
	res, err := send(t, cfg, a, b, c)
	require.NoError(t, err)
	require.Equal(t, "id-b", res.ProviderMessageID)
	require.Equal(t, []string{a}, res.InvalidTokens)
	require.Empty(t, header().Get("Authorization"), "no access token configured, none sent")

	cfg, _ = scripted(t, 200, tickets(bad("MessageRateExceeded"), bad("DeviceNotRegistered")))
	_, err = send(t, cfg, a, b)
	pe := provider.AsError(err)
	require.Equal(t, provider.Transient, pe.Class, pe.Error())
	require.Equal(t, []string{b}, pe.InvalidTokens)

	cfg, _ = scripted(t, 200, tickets(bad("InvalidCredentials")))
	_, err = send(t, cfg, a)
	pe = provider.AsError(err)
	require.Equal(t, provider.Permanent, pe.Class, pe.Error())
	require.Contains(t, pe.Reason, "InvalidCredentials")

	// One message may be answered with a ticket object rather than an array.
	cfg, _ = scripted(t, 200, `{"data":{"status":"ok","id":"only"}}`)
	res, err = send(t, cfg, a)
	require.NoError(t, err)
	require.Equal(t, "only", res.ProviderMessageID)

	// Fewer tickets than messages cannot be matched up.
	cfg, _ = scripted(t, 200, tickets(ok("x")))
	_, err = send(t, cfg, a, b)
	require.Equal(t, provider.Permanent, provider.AsError(err).Class)
}

func TestRequestErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status int
		code   string
		class  provider.Class
	}{
		{400, "PUSH_TOO_MANY_EXPERIENCE_IDS", provider.Permanent},
		{401, "UNAUTHORIZED", provider.Permanent},
		{429, "TOO_MANY_REQUESTS", provider.Transient},
		{500, "INTERNAL_SERVER_ERROR", provider.Transient},
		{200, "TOO_MANY_REQUESTS", provider.Transient}, // errors without tickets
	} {
		cfg, _ := scripted(t, tc.status, `{"errors":[{"code":"`+tc.code+`","message":"m"}]}`)
		_, err := send(t, cfg, expofake.Token(1))
		pe := provider.AsError(err)
		require.Equal(t, tc.class, pe.Class, "%d %s: %v", tc.status, tc.code, pe)
		require.Contains(t, pe.Reason, tc.code)
	}
}

func TestTokenShape(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"ExponentPushToken[xxxxxxxxxxxxxxxxxxxxxx]", "ExpoPushToken[abc]",
		"F5741A13-BCDA-434B-A316-5DC0E6FFA94F"} {
		require.True(t, expo.IsPushToken(s), s)
	}
	for _, s := range []string{"", "ExponentPushToken[]", "ExponentPushToken[abc", "abc", "fcm:APA91b"} {
		require.False(t, expo.IsPushToken(s), s)
	}
}
