package msteams

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
	"github.com/herald-notify/herald/internal/provider/chat/msteams/msteamsfake"
	"github.com/herald-notify/herald/internal/provider/providertest"
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

func TestBody(t *testing.T) {
	t.Parallel()
	b, err := json.Marshal(Body("Deploy *done* ✓"))
	require.NoError(t, err)
	require.JSONEq(t, `{"type":"message","attachments":[{"contentType":"application/vnd.microsoft.card.adaptive",
		"contentUrl":null,"content":{"$schema":"http://adaptivecards.io/schemas/adaptive-card.json",
		"type":"AdaptiveCard","version":"1.4","body":[{"type":"TextBlock","text":"Deploy *done* ✓","wrap":true}]}}]}`, string(b))

	// A MessageCard authored in the step goes as it is (Novu's behaviour).
	card := `{"@type":"MessageCard","@context":"http://schema.org/extensions","summary":"s","text":"t"}`
	b, _ = json.Marshal(Body(card))
	require.JSONEq(t, card, string(b))

	// A bare Adaptive Card is wrapped into a message.
	b, _ = json.Marshal(Body(`{"type":"AdaptiveCard","version":"1.5","body":[{"type":"TextBlock","text":"x"}]}`))
	require.JSONEq(t, `{"type":"message","attachments":[{"contentType":"application/vnd.microsoft.card.adaptive",
		"contentUrl":null,"content":{"type":"AdaptiveCard","version":"1.5","body":[{"type":"TextBlock","text":"x"}]}}]}`, string(b))

	// Text that merely starts with a brace is text.
	require.Equal(t, "message", Body("{not json} hi")["type"])
}

func TestBothKindsDeliver(t *testing.T) {
	t.Parallel()
	f := msteamsfake.New()
	defer f.Close()
	res, err := send(t, &provider.Message{Content: "via connector", WebhookURL: f.ConnectorURL()})
	require.NoError(t, err)
	require.Equal(t, "1", res.Raw)
	res2, err := send(t, &provider.Message{Content: "via workflows", WebhookURL: f.WorkflowURL()})
	require.NoError(t, err)
	require.Empty(t, res2.Raw)
	got := f.Received()
	require.Len(t, got, 2)
	require.Equal(t, "via connector", got[0].Content)
	require.Equal(t, got[0].MessageID, res.ProviderMessageID)
	require.Equal(t, "via workflows", got[1].Content)
	require.Equal(t, got[1].MessageID, res2.ProviderMessageID)
	require.True(t, strings.HasPrefix(res2.ProviderMessageID, "08584"), "the Workflows run id")
}

// A connector reports what it deems retryable as 200 with the Teams
// endpoint's status in the text; only a message count is a success.
func TestConnector200Failures(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		body   string
		class  provider.Class
		status int
	}{
		{"Webhook message delivery failed with error: Microsoft Teams endpoint returned HTTP error 429 with ContextId tcid=0..", provider.Transient, 429},
		{"Webhook message delivery failed with error: Microsoft Teams endpoint returned HTTP error 502 with ContextId tcid=0..", provider.Transient, 502},
		{"Webhook message delivery failed with error: Microsoft Teams endpoint returned HTTP error 413 with ContextId tcid=0..", provider.Permanent, 413},
		{"Webhook message delivery failed with error: Microsoft Teams endpoint returned HTTP error 400 with ContextId tcid=0..", provider.Permanent, 400},
		{`{"version":"1.1","statusCode":200,"reasonPhrase":"OK","isSuccessStatusCode":true}`, provider.Transient, 200},
		{"", provider.Transient, 200},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Request-Id", "2a9d4bfa-13ea-426a-b07f-b44a2e678b2e")
			_, _ = io.WriteString(w, tc.body)
		}))
		_, err := send(t, &provider.Message{Content: "x", WebhookURL: srv.URL + msteamsfake.ConnectorPath})
		srv.Close()
		pe := provider.AsError(err)
		require.Equal(t, tc.class, pe.Class, tc.body)
		require.Equal(t, tc.status, pe.Status, tc.body)
		require.NotEmpty(t, pe.Reason)
	}
	// The fake's rate limit is that 200 answer.
	f := msteamsfake.New()
	defer f.Close()
	f.Fail(providertest.RateLimited, 1)
	_, err := send(t, &provider.Message{Content: "x", WebhookURL: f.ConnectorURL()})
	pe := provider.AsError(err)
	require.Equal(t, provider.Transient, pe.Class)
	require.Equal(t, 429, pe.Status)
	require.Empty(t, f.Received())
}

func TestConnectorAndWorkflowRefusals(t *testing.T) {
	t.Parallel()
	f := msteamsfake.New()
	defer f.Close()
	f.Fail(providertest.Rejected, 1)
	_, err := send(t, &provider.Message{Content: "x", WebhookURL: f.ConnectorURL()})
	pe := provider.AsError(err)
	require.Equal(t, provider.Permanent, pe.Class)
	require.Equal(t, msteamsfake.BadPayload, pe.Reason)

	removed := strings.Replace(f.ConnectorURL(), msteamsfake.HookToken, "00000000000000000000000000000000", 1)
	_, err = send(t, &provider.Message{Content: "x", WebhookURL: removed})
	pe = provider.AsError(err)
	require.Equal(t, provider.Permanent, pe.Class)
	require.Equal(t, http.StatusGone, pe.Status)

	badSig := strings.Replace(f.WorkflowURL(), msteamsfake.WorkflowSignature, "AnotherSignatureThatIsWrong0123456789abcdef", 1)
	_, err = send(t, &provider.Message{Content: "x", WebhookURL: badSig})
	pe = provider.AsError(err)
	require.Equal(t, provider.Permanent, pe.Class)
	require.Equal(t, http.StatusUnauthorized, pe.Status)
	require.Contains(t, pe.Reason, "DirectApiInvalidAuthorizationSignature")
	require.NotContains(t, pe.Error()+pe.Raw, "AnotherSignatureThatIsWrong")

	// A Workflows trigger needs the Adaptive Card attachments: a bare text
	// (what Novu sends) is refused by the template's schema.
	_, err = send(t, &provider.Message{Content: `{"text":"plain"}`, WebhookURL: f.WorkflowURL()})
	pe = provider.AsError(err)
	require.Equal(t, provider.Permanent, pe.Class)
	require.Contains(t, pe.Reason, "TriggerInputSchemaMismatch")

	// ...which a connector takes.
	_, err = send(t, &provider.Message{Content: `{"text":"plain"}`, WebhookURL: f.ConnectorURL()})
	require.NoError(t, err)
	require.Equal(t, "plain", f.Received()[0].Content)

	f.Fail(providertest.RateLimited, 1)
	_, err = send(t, &provider.Message{Content: "x", WebhookURL: f.WorkflowURL()})
	pe = provider.AsError(err)
	require.Equal(t, provider.Transient, pe.Class)
	require.Equal(t, 7*time.Second, pe.RetryAfter)
	require.Contains(t, pe.Reason, "WorkflowRequestsThrottled")
}

// The Workflows signature (sig=…) and connector tokens are secrets: never in what Herald keeps.
func TestURLSecretsRedacted(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"code": "InvalidTemplate",
			"message": "bad request for " + r.URL.RequestURI()}})
	}))
	defer srv.Close()
	_, err := send(t, &provider.Message{Content: "x", WebhookURL: srv.URL + msteamsfake.WorkflowPath + "?api-version=1&sig=" + msteamsfake.WorkflowSignature})
	pe := provider.AsError(err)
	require.Equal(t, provider.Permanent, pe.Class)
	require.NotContains(t, pe.Error()+pe.Raw, msteamsfake.WorkflowSignature)
	require.NotContains(t, pe.Error()+pe.Raw, msteamsfake.WorkflowID)
}
