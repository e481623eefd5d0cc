// Package msteams delivers chat messages to Microsoft Teams channels through
// either kind of incoming webhook: an Office 365 connector URL
// (https://<tenant>.webhook.office.com/webhookb2/…, answers 200 "1") or a
// Power Automate "Workflows" URL (…/workflows/<id>/triggers/manual/paths/invoke?…&sig=…,
// answers 202).
//
// The body is a message with one Adaptive Card holding the text: both kinds
// accept it, and the Workflows template that posts to a channel ("Send
// webhook alerts to a channel") only renders attachments of that shape — a
// bare {"text"} (what Novu sends) is accepted by Workflows with 202 and then
// posts nothing. Content that is itself a JSON object is sent as it is, as
// Novu does (a MessageCard or a message the template author built); a bare
// Adaptive Card object is wrapped into a message.
package msteams

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/chat/hook"
)

// Entry registers the provider. Teams webhooks take no credential beyond
// their URL; webhookUrl is the integration-wide fallback destination.
var Entry = provider.Entry{
	ID: "msteams", Channel: provider.Chat,
	Credentials: []provider.Credential{
		{Key: "webhookUrl"},
	},
	New: New,
}

type sender struct{ cfg provider.Config }

// New builds a sender for one integration.
func New(cfg provider.Config) (provider.Sender, error) { return &sender{cfg: cfg}, nil }

func (s *sender) Send(ctx context.Context, m *provider.Message) (*provider.Result, error) {
	t, err := hook.Parse(m.WebhookURL)
	if err != nil {
		return nil, err
	}
	body := provider.Merge(Body(m.Content), m.Overrides)
	req, err := provider.JSONRequest(t.String(), body, t.Secrets(s.cfg.Secrets()...))
	if err != nil {
		return nil, err
	}
	resp, err := hook.Do(ctx, s.cfg.HTTP, req)
	if err != nil {
		return nil, err
	}
	if !resp.OK() {
		return nil, hook.Fail(resp, reason(resp.Body), req.Secrets)
	}
	if pe := connectorFailure(resp, isConnector(t.URL.Path), req.Secrets); pe != nil {
		return nil, pe
	}
	return &provider.Result{ProviderMessageID: messageID(resp.Header), Raw: resp.Raw}, nil
}

// Body is the request body for content: an Adaptive Card message, or the
// content itself when it is a JSON object.
func Body(content string) map[string]any {
	if c := strings.TrimSpace(content); strings.HasPrefix(c, "{") {
		var obj map[string]any
		if json.Unmarshal([]byte(c), &obj) == nil {
			if obj["type"] == "AdaptiveCard" {
				return message(obj)
			}
			return obj
		}
	}
	return message(map[string]any{
		"$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
		"type":    "AdaptiveCard",
		"version": "1.4",
		"body":    []any{map[string]any{"type": "TextBlock", "text": content, "wrap": true}},
	})
}

func message(card map[string]any) map[string]any {
	return map[string]any{
		"type": "message",
		"attachments": []any{map[string]any{
			"contentType": "application/vnd.microsoft.card.adaptive",
			"contentUrl":  nil,
			"content":     card,
		}},
	}
}

// messageID is the id the answer carries: a connector's request-id (what
// Novu keeps), else the Workflows run id or request id.
func messageID(h http.Header) string {
	for _, k := range []string{"Request-Id", "X-Ms-Workflow-Run-Id", "X-Ms-Request-Id"} {
		if v := h.Get(k); v != "" {
			return v
		}
	}
	return ""
}

// isConnector tells an Office 365 connector URL by its path.
func isConnector(path string) bool { return strings.Contains(path, "/IncomingWebhook/") }

// embedded is how a connector reports, in a 200 answer, the status the
// Teams endpoint behind it returned.
var embedded = regexp.MustCompile(`returned HTTP error (\d{3})`)

// connectorFailure reads a 2xx answer the way Microsoft says to: a
// connector succeeded only when its body is a number (the messages
// posted, "1"); it reports failures it deems retryable as 200 with
// "Webhook message delivery failed with error: Microsoft Teams endpoint
// returned HTTP error 429 …". The embedded status classifies the failure
// (429 and 5xx transient, 400 bad card or 413 too large permanent); a
// connector's other answers that are not a count are transient (Microsoft
// wraps in a 200 what it deems retryable). Workflows answer 202 with an
// empty body (or whatever a Response action returns): success.
func connectorFailure(resp *provider.Response, connector bool, secrets []string) *provider.Error {
	text := strings.TrimSpace(string(resp.Body))
	if n, err := strconv.Atoi(text); err == nil && n > 0 {
		return nil
	}
	if m := embedded.FindStringSubmatch(text); m != nil {
		status, _ := strconv.Atoi(m[1])
		return provider.StatusError(&provider.Response{Status: status, Header: http.Header{}, Raw: resp.Raw},
			provider.Redact(hook.Text(resp.Body), secrets))
	}
	if connector {
		reason := provider.Redact(hook.Text(resp.Body), secrets)
		if reason == "" {
			reason = "unexpected connector answer (not a message count)"
		}
		return &provider.Error{Class: provider.Transient, Status: resp.Status, Reason: reason, Raw: resp.Raw}
	}
	return nil
}

// reason reads a Workflows error {"error":{"code","message"}}, else a
// connector's plain text ("Bad payload received by generic incoming webhook.").
func reason(body []byte) string {
	var e struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && (e.Error.Code != "" || e.Error.Message != "") {
		if e.Error.Code == "" {
			return e.Error.Message
		}
		if e.Error.Message == "" {
			return e.Error.Code
		}
		return e.Error.Message + " (" + e.Error.Code + ")"
	}
	return hook.Text(body)
}
