// Package sendgrid delivers e-mail through SendGrid's v3 Mail Send API.
package sendgrid

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/herald-notify/herald/internal/provider"
)

// Entry registers the provider.
var Entry = provider.Entry{
	ID: "sendgrid", Channel: provider.Email,
	Credentials: []provider.Credential{
		{Key: "apiKey", Required: true, Secret: true},
		{Key: "from", Required: true},
		{Key: "senderName"},
		{Key: "ipPoolName"},
		{Key: "baseUrl"},
	},
	New:    New,
	Casing: provider.CasingSnake,
}

const origin = "https://api.sendgrid.com"

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

type address struct {
	Email string `json:"email"`
	Name  string `json:"name,omitempty"`
}

func addresses(list []string) []address {
	out := make([]address, len(list))
	for i, a := range list {
		out[i] = address{Email: a}
	}
	return out
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
	p := map[string]any{"to": addresses(m.To)}
	if len(m.Cc) > 0 {
		p["cc"] = addresses(m.Cc)
	}
	if len(m.Bcc) > 0 {
		p["bcc"] = addresses(m.Bcc)
	}
	body := map[string]any{
		"personalizations": []any{p},
		"from":             address{Email: from, Name: name},
		"subject":          m.Subject,
		"content": []map[string]string{
			{"type": "text/plain", "value": m.Text}, {"type": "text/html", "value": m.HTML},
		},
		"custom_args": map[string]string{"heraldMessageId": m.ID},
	}
	if m.ReplyTo != "" {
		body["reply_to"] = address{Email: m.ReplyTo}
	}
	if len(m.Headers) > 0 {
		body["headers"] = m.Headers
	}
	if pool := c.String("ipPoolName"); pool != "" {
		body["ip_pool_name"] = pool
	}
	body = provider.Merge(body, m.Overrides)
	req, err := provider.JSONRequest(s.base+"/v3/mail/send", body, s.cfg.Secrets())
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.String("apiKey"))
	resp, err := provider.Do(ctx, s.cfg.HTTP, req)
	if err != nil {
		return nil, err
	}
	if !resp.OK() {
		return nil, provider.StatusError(resp, reason(resp.Body))
	}
	return &provider.Result{ProviderMessageID: resp.Header.Get("X-Message-Id"), Raw: resp.Raw}, nil
}

// reason joins the messages of SendGrid's {"errors":[{message,field}]}.
func reason(body []byte) string {
	var e struct {
		Errors []struct {
			Message string `json:"message"`
			Field   string `json:"field"`
		} `json:"errors"`
	}
	if json.Unmarshal(body, &e) != nil {
		return ""
	}
	var parts []string
	for _, x := range e.Errors {
		if x.Field != "" {
			parts = append(parts, x.Field+": "+x.Message)
		} else {
			parts = append(parts, x.Message)
		}
	}
	return strings.Join(parts, "; ")
}
