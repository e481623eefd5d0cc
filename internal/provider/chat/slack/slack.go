// Package slack delivers chat messages through Slack incoming webhooks
// (https://hooks.slack.com/services/T…/B…/…).
package slack

import (
	"context"

	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/chat/hook"
)

// Entry registers the provider. Novu's Slack credentials (applicationId,
// clientId, secretKey, redirectUrl) serve its OAuth Connect flow, not the
// webhook post; webhookUrl is the integration-wide destination the engine
// falls back to when a subscriber has none.
var Entry = provider.Entry{
	ID: "slack", Channel: provider.Chat,
	Credentials: []provider.Credential{
		{Key: "webhookUrl"},
	},
	New:    New,
	Casing: provider.CasingSnake,
}

type sender struct{ cfg provider.Config }

// New builds a sender for one integration.
func New(cfg provider.Config) (provider.Sender, error) { return &sender{cfg: cfg}, nil }

func (s *sender) Send(ctx context.Context, m *provider.Message) (*provider.Result, error) {
	t, err := hook.Parse(m.WebhookURL)
	if err != nil {
		return nil, err
	}
	body := provider.Merge(map[string]any{"text": m.Content}, m.Overrides)
	req, err := provider.JSONRequest(t.String(), body, t.Secrets(s.cfg.Secrets()...))
	if err != nil {
		return nil, err
	}
	resp, err := hook.Do(ctx, s.cfg.HTTP, req)
	if err != nil {
		return nil, err
	}
	if !resp.OK() {
		// Slack answers a plain-text error code: invalid_payload, no_text,
		// invalid_token, channel_not_found, channel_is_archived, rollup_error…
		return nil, hook.Fail(resp, hook.Text(resp.Body), req.Secrets)
	}
	// Incoming webhooks answer "ok" and no message id; the request id Slack
	// puts in a header is what Novu keeps.
	return &provider.Result{ProviderMessageID: resp.Header.Get("X-Slack-Req-Id"), Raw: resp.Raw}, nil
}
