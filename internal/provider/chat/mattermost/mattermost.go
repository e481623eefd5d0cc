// Package mattermost delivers chat messages through Mattermost incoming
// webhooks (https://<server>/hooks/<key>).
package mattermost

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/chat/hook"
)

// Entry registers the provider. Mattermost webhooks take no credential
// beyond their URL; webhookUrl is the integration-wide fallback destination.
var Entry = provider.Entry{
	ID: "mattermost", Channel: provider.Chat,
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
	// channel, username and icon_url come from the overrides when wanted;
	// without them the webhook posts to its own channel under its own name.
	body := map[string]any{"text": m.Content}
	if m.ChatChannel != "" {
		body["channel"] = m.ChatChannel
	}
	body = provider.Merge(body, m.Overrides)
	req, err := provider.JSONRequest(t.String(), body, t.Secrets(s.cfg.Secrets()...))
	if err != nil {
		return nil, err
	}
	resp, err := hook.Do(ctx, s.cfg.HTTP, req)
	if err != nil {
		return nil, err
	}
	if !resp.OK() {
		var e appError
		reason := hook.Text(resp.Body)
		if json.Unmarshal(resp.Body, &e) == nil {
			reason = e.reason()
		}
		pe := hook.Fail(resp, reason, req.Secrets)
		// 501 is the server saying incoming webhooks are disabled: no retry
		// helps until an administrator turns them on.
		if resp.Status == http.StatusNotImplemented {
			pe.Class, pe.RetryAfter = provider.Permanent, 0
		}
		return nil, pe
	}
	return &provider.Result{ProviderMessageID: resp.Header.Get("X-Request-Id"), Raw: resp.Raw}, nil
}

// appError is Mattermost's error body.
type appError struct {
	ID            string `json:"id"`
	Message       string `json:"message"`
	DetailedError string `json:"detailed_error"`
	RequestID     string `json:"request_id"`
	StatusCode    int    `json:"status_code"`
}

func (e appError) reason() string {
	switch {
	case e.Message != "" && e.ID != "":
		return e.Message + " (" + e.ID + ")"
	case e.Message != "":
		return e.Message
	}
	return e.ID
}
