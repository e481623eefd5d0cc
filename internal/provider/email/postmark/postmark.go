// Package postmark delivers e-mail through Postmark's Email API
// (POST /email) on the integration's server token.
package postmark

import (
	"context"
	"encoding/json"
	"sort"
	"strconv"
	"strings"

	"github.com/herald-notify/herald/internal/provider"
)

// Entry registers the provider.
var Entry = provider.Entry{
	ID: "postmark", Channel: provider.Email,
	Credentials: []provider.Credential{
		{Key: "apiKey", Required: true, Secret: true},
		{Key: "from", Required: true},
		{Key: "senderName"},
		{Key: "baseUrl"},
	},
	New:    New,
	Casing: provider.CasingPascal,
}

const origin = "https://api.postmarkapp.com"

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

type header struct {
	Name  string `json:"Name"`
	Value string `json:"Value"`
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
	body := map[string]any{
		"From": provider.Address(name, from), "To": strings.Join(m.To, ","), "Subject": m.Subject,
		"MessageStream": "outbound",
	}
	if len(m.Cc) > 0 {
		body["Cc"] = strings.Join(m.Cc, ",")
	}
	if len(m.Bcc) > 0 {
		body["Bcc"] = strings.Join(m.Bcc, ",")
	}
	if m.ReplyTo != "" {
		body["ReplyTo"] = m.ReplyTo
	}
	if m.HTML != "" {
		body["HtmlBody"] = m.HTML
	}
	if m.Text != "" {
		body["TextBody"] = m.Text
	}
	if len(m.Headers) > 0 {
		hs := make([]header, 0, len(m.Headers))
		for k, v := range m.Headers {
			hs = append(hs, header{Name: k, Value: v})
		}
		sort.Slice(hs, func(i, j int) bool { return hs[i].Name < hs[j].Name })
		body["Headers"] = hs
	}
	if m.ID != "" {
		body["Metadata"] = map[string]string{"heraldMessageId": m.ID}
	}
	body = provider.Merge(body, m.Overrides)
	req, err := provider.JSONRequest(s.base+"/email", body, s.cfg.Secrets())
	if err != nil {
		return nil, err
	}
	req.Header.Set("X-Postmark-Server-Token", c.String("apiKey"))
	resp, err := provider.Do(ctx, s.cfg.HTTP, req)
	if err != nil {
		return nil, err
	}
	var ans struct {
		ErrorCode int    `json:"ErrorCode"`
		Message   string `json:"Message"`
		MessageID string `json:"MessageID"`
	}
	_ = json.Unmarshal(resp.Body, &ans)
	if !resp.OK() {
		return nil, provider.StatusError(resp, reason(ans.ErrorCode, ans.Message))
	}
	// Postmark reports a refusal by ErrorCode; a 2xx with one is no send.
	if ans.ErrorCode != 0 || ans.MessageID == "" {
		return nil, &provider.Error{Class: provider.Permanent, Status: resp.Status,
			Reason: reason(ans.ErrorCode, ans.Message), Raw: resp.Raw}
	}
	return &provider.Result{ProviderMessageID: ans.MessageID, Raw: resp.Raw}, nil
}

// reason is Postmark's message with its error code (406: inactive
// recipient, 300: invalid request, 10: bad token).
func reason(code int, msg string) string {
	if code == 0 {
		return msg
	}
	return "ErrorCode " + strconv.Itoa(code) + ": " + msg
}
