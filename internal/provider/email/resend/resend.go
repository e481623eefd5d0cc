// Package resend delivers e-mail through Resend's API (POST /emails),
// with the delivery's idempotency key so that a retried send is not a
// second e-mail.
package resend

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"

	"github.com/herald-notify/herald/internal/provider"
)

// Entry registers the provider.
var Entry = provider.Entry{
	ID: "resend", Channel: provider.Email,
	Credentials: []provider.Credential{
		{Key: "apiKey", Required: true, Secret: true},
		{Key: "from", Required: true},
		{Key: "senderName"},
		{Key: "baseUrl"},
	},
	New:    New,
	Casing: provider.CasingSnake,
}

const origin = "https://api.resend.com"

// maxKey is the longest Idempotency-Key Resend accepts.
const maxKey = 256

type sender struct {
	cfg  provider.Config
	base string
}

// New builds a sender for one integration.
func New(cfg provider.Config) (provider.Sender, error) {
	base, err := provider.BaseURL(cfg.Credentials, origin)
	if err != nil {
		return nil, err
	}
	return &sender{cfg: cfg, base: base}, nil
}

func (s *sender) Send(ctx context.Context, m *provider.Message) (*provider.Result, error) {
	c := s.cfg.Credentials
	from, name := c.String("from"), c.String("senderName")
	if m.From != "" {
		from = m.From
	}
	if m.SenderName != "" {
		name = m.SenderName
	}
	body := map[string]any{"from": provider.Address(name, from), "to": m.To, "subject": m.Subject}
	if len(m.Cc) > 0 {
		body["cc"] = m.Cc
	}
	if len(m.Bcc) > 0 {
		body["bcc"] = m.Bcc
	}
	if m.ReplyTo != "" {
		body["reply_to"] = m.ReplyTo
	}
	if m.HTML != "" {
		body["html"] = m.HTML
	}
	if m.Text != "" {
		body["text"] = m.Text
	}
	if len(m.Headers) > 0 {
		body["headers"] = m.Headers
	}
	if m.ID != "" {
		body["tags"] = []map[string]string{{"name": "heraldMessageId", "value": tagValue(m.ID)}}
	}
	body = provider.Merge(body, m.Overrides)
	req, err := provider.JSONRequest(s.base+"/emails", body, s.cfg.Secrets())
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.String("apiKey"))
	if k := idempotencyKey(m.IdempotencyKey); k != "" {
		req.Header.Set("Idempotency-Key", k)
	}
	resp, err := provider.Do(ctx, s.cfg.HTTP, req)
	if err != nil {
		return nil, err
	}
	if !resp.OK() {
		return nil, classify(resp)
	}
	id := provider.Path(resp.Body, "id")
	if id == "" {
		return nil, &provider.Error{Class: provider.Transient, Status: resp.Status, Reason: "Resend answered without an email id", Raw: resp.Raw}
	}
	return &provider.Result{ProviderMessageID: id, Raw: resp.Raw}, nil
}

// tagValue keeps what Resend allows in a tag: ASCII letters, digits,
// underscores and dashes, at most 256 of them.
func tagValue(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	return string(b[:min(len(b), 256)])
}

// idempotencyKey keeps a key within Resend's 256 characters: a longer one
// is replaced by its SHA-256, as stable across retries as the key itself.
func idempotencyKey(k string) string {
	if len(k) <= maxKey {
		return k
	}
	sum := sha256.Sum256([]byte(k))
	return hex.EncodeToString(sum[:])
}

// classify reads Resend's {statusCode, name, message}. Besides the status
// rules, a 409 concurrent_idempotent_requests (the same key still in
// flight) is worth retrying, while invalid_idempotent_request (the key
// was used for another payload) is not.
func classify(resp *provider.Response) *provider.Error {
	var e struct {
		Name    string `json:"name"`
		Message string `json:"message"`
	}
	_ = json.Unmarshal(resp.Body, &e)
	reason := e.Message
	if e.Name != "" {
		reason = e.Name + ": " + e.Message
	}
	pe := provider.StatusError(resp, reason)
	if resp.Status == http.StatusConflict && e.Name == "concurrent_idempotent_requests" {
		pe.Class = provider.Transient
	}
	return pe
}
