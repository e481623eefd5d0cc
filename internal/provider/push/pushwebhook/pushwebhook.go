// Package pushwebhook delivers push notifications to the integration's own
// webhook, as Novu's push-webhook provider does: one signed JSON POST with
// every device token of the subscriber.
package pushwebhook

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"net/url"
	"strings"

	"github.com/herald-notify/herald/internal/provider"
)

// Entry registers the provider.
var Entry = provider.Entry{
	ID: "push-webhook", Channel: provider.Push,
	Credentials: []provider.Credential{
		{Key: "webhookUrl", Required: true},
		{Key: "secretKey", Required: true, Secret: true},
	},
	New: New,
}

// SignatureHeader carries the body's HMAC.
const SignatureHeader = "X-Novu-Signature"

type sender struct {
	cfg     provider.Config
	url     string
	secrets []string
}

// New builds a sender for one integration.
func New(cfg provider.Config) (provider.Sender, error) {
	raw := cfg.Credentials.String("webhookUrl")
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, provider.Permanentf("credentials.webhookUrl is not an http(s) URL")
	}
	// The URL may hold a token of the receiver's: it is kept out of what Herald shows.
	return &sender{cfg: cfg, url: raw, secrets: append(cfg.Secrets(), raw)}, nil
}

// Sign is the signature of a body: hex(HMAC-SHA256(secretKey, body)).
func Sign(secretKey string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secretKey))
	mac.Write(body)
	return hex.EncodeToString(mac.Sum(nil))
}

// Body is what the webhook receives: Novu's shape ({target, title, content,
// payload: {…trigger payload, subscriber, step}, overrides}) plus data, the
// push step's custom data.
func Body(m *provider.Message) map[string]any {
	payload := map[string]any{}
	maps.Copy(payload, m.Payload)
	payload["subscriber"] = m.Subscriber
	payload["step"] = m.Step
	overrides := m.Overrides
	if overrides == nil {
		overrides = map[string]any{}
	}
	body := map[string]any{"target": m.Tokens, "title": m.Subject, "content": m.Content, "payload": payload,
		"overrides": overrides}
	if len(m.Data) > 0 {
		body["data"] = m.Data
	}
	return body
}

// Send delivers m to its device tokens in one request.
func (s *sender) Send(ctx context.Context, m *provider.Message) (*provider.Result, error) {
	req, err := provider.JSONRequest(s.url, Body(m), s.secrets)
	if err != nil {
		return nil, err
	}
	req.Header.Set(SignatureHeader, Sign(s.cfg.Credentials.String("secretKey"), req.Body))
	resp, err := provider.Do(ctx, s.cfg.HTTP, req)
	if err != nil {
		return nil, err
	}
	if !resp.OK() {
		return nil, provider.StatusError(resp, reason(resp.Body))
	}
	return &provider.Result{ProviderMessageID: provider.Path(resp.Body, "id"), Raw: resp.Raw}, nil
}

// reason reads a receiver's error message ({"message"} or {"error"}), if any.
func reason(body []byte) string {
	var e struct {
		Message string `json:"message"`
		Error   any    `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil {
		return ""
	}
	if e.Message != "" {
		return e.Message
	}
	if s, ok := e.Error.(string); ok {
		return strings.TrimSpace(s)
	}
	return ""
}
