package slack

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
	"github.com/herald-notify/herald/internal/provider/chat/hook"
	"github.com/herald-notify/herald/internal/provider/chat/slack/slackfake"
	"github.com/herald-notify/herald/internal/provider/providertest"
)

func send(t *testing.T, f *slackfake.Fake, m *provider.Message) (*provider.Result, error) {
	t.Helper()
	s, err := New(providertest.Config(f, f.Credentials(), true))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return s.Send(ctx, m)
}

// plainConfig reaches any loopback server, as the suite's config does.
func plainConfig() provider.Config {
	return provider.Config{Credentials: provider.Credentials{},
		HTTP: &http.Client{Transport: (&netguard.Dialer{AllowPrivate: true}).Transport()}, Now: time.Now}
}

func TestBodyAndOverrides(t *testing.T) {
	t.Parallel()
	f := slackfake.New()
	defer f.Close()
	blocks := []any{map[string]any{"type": "section", "text": map[string]any{"type": "mrkdwn", "text": "*Build* passed"}}}
	m := &provider.Message{Content: "Build passed <ok>", WebhookURL: f.WebhookURL(),
		Overrides: map[string]any{"blocks": blocks, "unfurl_links": false}}
	res, err := send(t, f, m)
	require.NoError(t, err)
	require.Equal(t, "ok", res.Raw)
	got := f.Received()
	require.Len(t, got, 1)
	require.Equal(t, "application/json", got[0].Header.Get("Content-Type"))
	var body map[string]any
	require.NoError(t, json.Unmarshal(got[0].Body, &body))
	require.Equal(t, "Build passed <ok>", body["text"])
	require.Equal(t, false, body["unfurl_links"])
	require.Len(t, body["blocks"], 1)
}

func TestWrongTokenIsPermanentAndNeverShown(t *testing.T) {
	t.Parallel()
	f := slackfake.New()
	defer f.Close()
	bad := strings.Replace(f.WebhookURL(), slackfake.WebhookToken, "WrongTokenWrongToken1234", 1)
	_, err := send(t, f, &provider.Message{Content: "hi", WebhookURL: bad})
	pe := provider.AsError(err)
	require.Equal(t, provider.Permanent, pe.Class)
	require.Equal(t, http.StatusForbidden, pe.Status)
	require.Equal(t, "invalid_token", pe.Reason)
	require.NotContains(t, pe.Error()+pe.Raw, "WrongTokenWrongToken1234")
	require.Empty(t, f.Received())
}

func TestNoURLOrNoHTTPSendsNothing(t *testing.T) {
	t.Parallel()
	f := slackfake.New()
	defer f.Close()
	_, err := send(t, f, &provider.Message{Content: "hi"})
	pe := provider.AsError(err)
	require.Equal(t, provider.Permanent, pe.Class)
	require.Equal(t, hook.Missing, pe.Reason)
	_, err = send(t, f, &provider.Message{Content: "hi", WebhookURL: strings.Replace(f.WebhookURL(), "http://", "ftp://", 1)})
	require.Equal(t, provider.Permanent, provider.AsError(err).Class)
	require.NotContains(t, err.Error(), slackfake.WebhookToken)
	require.Zero(t, f.Requests())
}

// Slack's documented webhook errors, in its plain-text shape.
func TestErrorClasses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status int
		body   string
		class  provider.Class
		retry  time.Duration
	}{
		{400, "invalid_payload", provider.Permanent, 0},
		{400, "no_text", provider.Permanent, 0},
		{403, "action_prohibited", provider.Permanent, 0},
		{404, "no_service", provider.Permanent, 0},
		{404, "channel_not_found", provider.Permanent, 0},
		{410, "channel_is_archived", provider.Permanent, 0},
		{429, "rate_limited", provider.Transient, 30 * time.Second},
		{500, "rollup_error", provider.Transient, 0},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			if tc.status == 429 {
				w.Header().Set("Retry-After", "30")
			}
			w.WriteHeader(tc.status)
			_, _ = io.WriteString(w, tc.body)
		}))
		s, err := New(plainConfig())
		require.NoError(t, err)
		_, err = s.Send(context.Background(), &provider.Message{Content: "hi", WebhookURL: srv.URL + "/services/T1/B2/tok"})
		srv.Close()
		pe := provider.AsError(err)
		require.Equal(t, tc.class, pe.Class, tc.body)
		require.Equal(t, tc.status, pe.Status)
		require.Equal(t, tc.body, pe.Reason)
		require.Equal(t, tc.retry, pe.RetryAfter)
	}
}

// A form payload ({"payload": json}) is what older Slack clients send; the
// fake takes it as Slack does.
func TestFakeTakesFormPayload(t *testing.T) {
	t.Parallel()
	f := slackfake.New()
	defer f.Close()
	resp, err := http.Post(f.WebhookURL(), "application/x-www-form-urlencoded",
		strings.NewReader(`payload=%7B%22text%22%3A%22from+a+form%22%7D`))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "from a form", f.Received()[0].Content)
	resp2, err := http.Post(f.WebhookURL(), "application/json", strings.NewReader(`{"text":""}`))
	require.NoError(t, err)
	defer resp2.Body.Close()
	b, _ := io.ReadAll(resp2.Body)
	require.Equal(t, http.StatusBadRequest, resp2.StatusCode)
	require.Equal(t, "no_text", string(b))
}
