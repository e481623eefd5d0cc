package mattermost

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
	"github.com/herald-notify/herald/internal/provider/chat/mattermost/mattermostfake"
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

func TestOverridesChooseChannelAndName(t *testing.T) {
	t.Parallel()
	f := mattermostfake.New()
	defer f.Close()
	res, err := send(t, &provider.Message{Content: "Build #7 passed", WebhookURL: f.WebhookURL(),
		Overrides: map[string]any{"channel": "town-square", "username": "herald", "icon_url": "https://herald.test/i.png"}})
	require.NoError(t, err)
	require.Equal(t, "ok", res.Raw)
	got := f.Received()
	require.Len(t, got, 1)
	require.Len(t, res.ProviderMessageID, 26)
	var body map[string]any
	require.NoError(t, json.Unmarshal(got[0].Body, &body))
	require.Equal(t, map[string]any{"text": "Build #7 passed", "channel": "town-square", "username": "herald",
		"icon_url": "https://herald.test/i.png"}, body)
}

func TestMattermostRefusals(t *testing.T) {
	t.Parallel()
	f := mattermostfake.New()
	defer f.Close()
	_, err := send(t, &provider.Message{Content: "x", WebhookURL: strings.Replace(f.WebhookURL(), mattermostfake.HookID, "zzzzzzzzzzzzzzzzzzzzzzzzzz", 1)})
	pe := provider.AsError(err)
	require.Equal(t, provider.Permanent, pe.Class)
	require.Equal(t, http.StatusBadRequest, pe.Status)
	require.Equal(t, "Invalid webhook. (web.incoming_webhook.invalid.app_error)", pe.Reason)
	require.NotContains(t, pe.Error()+pe.Raw, "zzzzzzzzzzzzzzzzzzzzzzzzzz")

	_, err = send(t, &provider.Message{Content: "", WebhookURL: f.WebhookURL()})
	pe = provider.AsError(err)
	require.Equal(t, provider.Permanent, pe.Class)
	require.Equal(t, "No text specified. (web.incoming_webhook.text.app_error)", pe.Reason)
	require.Empty(t, f.Received())
}

func TestErrorClasses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status int
		body   string
		class  provider.Class
		reason string
	}{
		{403, `{"id":"web.incoming_webhook.permissions.app_error","message":"Inappropriate channel permissions.","status_code":403}`,
			provider.Permanent, "Inappropriate channel permissions. (web.incoming_webhook.permissions.app_error)"},
		{404, `{"id":"api.context.404.app_error","message":"Sorry, we could not find the page.","status_code":404}`,
			provider.Permanent, "Sorry, we could not find the page. (api.context.404.app_error)"},
		// Incoming webhooks disabled on the server: no retry helps.
		{501, `{"id":"web.incoming_webhook.disabled.app_error","message":"Incoming webhooks have been disabled by the system admin.","status_code":501}`,
			provider.Permanent, "Incoming webhooks have been disabled by the system admin. (web.incoming_webhook.disabled.app_error)"},
		{429, "limit exceeded\n", provider.Transient, "limit exceeded"},
		{502, "<html>Bad Gateway</html>", provider.Transient, "Bad Gateway"},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.WriteHeader(tc.status)
			_, _ = io.WriteString(w, tc.body)
		}))
		_, err := send(t, &provider.Message{Content: "x", WebhookURL: srv.URL + "/hooks/abc"})
		srv.Close()
		pe := provider.AsError(err)
		require.Equal(t, tc.class, pe.Class, tc.body)
		require.Equal(t, tc.status, pe.Status)
		require.Equal(t, tc.reason, pe.Reason)
	}
}
