package discord

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/netguard"
	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/chat/discord/discordfake"
)

// plainConfig reaches any loopback server, as the suite's config does.
func plainConfig() provider.Config {
	return provider.Config{Credentials: provider.Credentials{},
		HTTP: &http.Client{Transport: (&netguard.Dialer{AllowPrivate: true}).Transport()}, Now: time.Now}
}

func send(t *testing.T, m *provider.Message) (*provider.Result, error) {
	t.Helper()
	s, err := New(plainConfig())
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return s.Send(ctx, m)
}

func TestWaitIsAddedAndTheURLsQueryKept(t *testing.T) {
	t.Parallel()
	f := discordfake.New()
	defer f.Close()
	res, err := send(t, &provider.Message{Content: "in a thread", WebhookURL: f.WebhookURL() + "?thread_id=1190000000000000042&wait=false",
		Overrides: map[string]any{"username": "Herald Bot", "embeds": []any{map[string]any{"title": "Build"}}}})
	require.NoError(t, err)
	got := f.Received()
	require.Len(t, got, 1)
	require.Equal(t, got[0].MessageID, res.ProviderMessageID)
	var msg map[string]any
	require.NoError(t, json.Unmarshal([]byte(res.Raw), &msg))
	require.Equal(t, "in a thread", msg["content"])
	require.Equal(t, "Herald Bot", msg["author"].(map[string]any)["username"])
	var body map[string]any
	require.NoError(t, json.Unmarshal(got[0].Body, &body))
	require.Equal(t, "Herald Bot", body["username"])
	require.Len(t, body["embeds"], 1)

	// What reached the server: wait forced to true, thread_id kept.
	var query string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		query = r.URL.RawQuery
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"1190000000000000043","content":"x"}`)
	}))
	defer srv.Close()
	res, err = send(t, &provider.Message{Content: "x", WebhookURL: srv.URL + "/api/webhooks/1/tok?thread_id=42&wait=false"})
	require.NoError(t, err)
	require.Equal(t, "1190000000000000043", res.ProviderMessageID)
	require.Equal(t, "thread_id=42&wait=true", query)
}

func TestDiscordRefusals(t *testing.T) {
	t.Parallel()
	f := discordfake.New()
	defer f.Close()
	for _, tc := range []struct {
		name, url, content string
		status             int
		reason             string
	}{
		{"wrong token", strings.Replace(f.WebhookURL(), discordfake.WebhookToken, "another-token-that-is-long-enough-0123456789", 1), "hi",
			401, "Invalid Webhook Token (code 50027)"},
		{"unknown webhook", strings.Replace(f.WebhookURL(), discordfake.WebhookID, "1000000000000000001", 1), "hi",
			404, "Unknown Webhook (code 10015)"},
		{"empty message", f.WebhookURL(), "", 400, "Cannot send an empty message (code 50006)"},
		{"too long", f.WebhookURL(), strings.Repeat("a", 2001), 400,
			"Invalid Form Body (code 50035): content: Must be 2000 or fewer in length."},
	} {
		_, err := send(t, &provider.Message{Content: tc.content, WebhookURL: tc.url})
		pe := provider.AsError(err)
		require.Equal(t, provider.Permanent, pe.Class, tc.name)
		require.Equal(t, tc.status, pe.Status, tc.name)
		require.Equal(t, tc.reason, pe.Reason, tc.name)
		require.NotContains(t, pe.Error()+pe.Raw, "another-token", tc.name)
	}
	require.Empty(t, f.Received())
}

// A 429 carries Retry-After and retry_after (seconds, fractional): the
// header wins, the body stands in when a proxy dropped the header.
func TestRateLimitRetryAfter(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		header string
		want   time.Duration
	}{{"3", 3 * time.Second}, {"", 2500 * time.Millisecond}} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			if tc.header != "" {
				w.Header().Set("Retry-After", tc.header)
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = io.WriteString(w, `{"message":"You are being rate limited.","retry_after":2.5,"global":true}`)
		}))
		_, err := send(t, &provider.Message{Content: "x", WebhookURL: srv.URL + "/api/webhooks/1/tok"})
		srv.Close()
		pe := provider.AsError(err)
		require.Equal(t, provider.Transient, pe.Class)
		require.Equal(t, tc.want, pe.RetryAfter)
		require.Equal(t, "You are being rate limited.", pe.Reason)
	}
}

// Discord's answers can echo a URL; the webhook token never shows in what Herald keeps.
func TestTokenRedactedFromAnswers(t *testing.T) {
	t.Parallel()
	const token = "sEcReT-webhook-token-abcdefghijklmnopqrstuvwxyz"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]any{"message": "bad request to " + r.URL.String(), "code": 50035})
	}))
	defer srv.Close()
	_, err := send(t, &provider.Message{Content: "x", WebhookURL: srv.URL + "/api/webhooks/1/" + token})
	pe := provider.AsError(err)
	require.Equal(t, provider.Permanent, pe.Class)
	require.NotContains(t, pe.Error(), token)
	require.NotContains(t, pe.Raw, token)
	require.Contains(t, pe.Reason, "[redacted]")
}
