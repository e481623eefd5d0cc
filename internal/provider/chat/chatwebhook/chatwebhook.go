// Package chatwebhook delivers chat messages to a webhook of the user's own
// (Novu's generic "chat-webhook" provider): a JSON POST of the message to
// the webhook URL, signed with the integration's HMAC key.
package chatwebhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/chat/hook"
)

// Entry registers the provider. secretKey is Novu's credential key for the
// HMAC key (its provider calls it hmacSecretKey); Novu does not require it,
// and without one the call goes unsigned. webhookUrl is the
// integration-wide fallback destination.
var Entry = provider.Entry{
	ID: "chat-webhook", Channel: provider.Chat,
	Credentials: []provider.Credential{
		{Key: "secretKey", Secret: true},
		{Key: "webhookUrl"},
	},
	New: New,
}

// SignatureHeader carries hex(HMAC-SHA256(key, raw body)).
const SignatureHeader = "X-Novu-Signature"

type sender struct{ cfg provider.Config }

// New builds a sender for one integration.
func New(cfg provider.Config) (provider.Sender, error) { return &sender{cfg: cfg}, nil }

func (s *sender) Send(ctx context.Context, m *provider.Message) (*provider.Result, error) {
	c := s.cfg.Credentials
	// Novu's body: {content, webhookUrl, channel?, phoneNumber?}, with the
	// overrides on top; they may send the call elsewhere (webhookUrl) and
	// sign it with their own key (hmacSecretKey, never sent).
	body := map[string]any{"content": m.Content}
	if m.ChatChannel != "" {
		body["channel"] = m.ChatChannel
	}
	if m.WebhookURL != "" {
		body["webhookUrl"] = m.WebhookURL
	}
	body = provider.Merge(body, m.Overrides)
	key := c.String("secretKey")
	if k, ok := body["hmacSecretKey"].(string); ok && k != "" {
		key = k
	}
	delete(body, "hmacSecretKey")
	dest, _ := body["webhookUrl"].(string)
	if strings.TrimSpace(dest) == "" {
		dest = m.WebhookURL
	}
	t, err := hook.Parse(dest)
	if err != nil {
		return nil, err
	}
	raw, err := Encode(body)
	if err != nil {
		return nil, err
	}
	secrets := append(s.cfg.Secrets(), key)
	if m.WebhookURL != "" && m.WebhookURL != dest {
		if orig, err := hook.Parse(m.WebhookURL); err == nil {
			secrets = append(secrets, orig.Secrets()...)
		}
	}
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json")
	if key != "" {
		h.Set(SignatureHeader, Sign(key, raw))
	}
	req := &provider.Request{Method: http.MethodPost, URL: t.String(), Header: h, Body: raw, Secrets: t.Secrets(secrets...)}
	resp, err := hook.Do(ctx, s.cfg.HTTP, req)
	if err != nil {
		return nil, err
	}
	if !resp.OK() {
		return nil, hook.Fail(resp, reason(resp.Body), req.Secrets)
	}
	return &provider.Result{ProviderMessageID: provider.Path(resp.Body, "id"), Raw: resp.Raw}, nil
}

// Encode serializes the body as JavaScript's JSON.stringify does (no HTML
// escaping, no trailing newline), so a receiver that verifies the
// signature over a re-serialized body gets the bytes that were signed.
func Encode(body any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(body); err != nil {
		return nil, provider.Permanentf("encoding the request: %v", err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// Sign is the X-Novu-Signature of a body: hex(HMAC-SHA256(key, body)).
func Sign(key string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(key))
	mac.Write(body)
	return hex.EncodeToString(mac.Sum(nil))
}

// reason reads a receiver's error: {"message"}, {"error"}, else the text.
func reason(body []byte) string {
	for _, k := range []string{"message", "error.message", "error"} {
		if s := provider.Path(body, k); s != "" {
			return s
		}
	}
	return hook.Text(body)
}
