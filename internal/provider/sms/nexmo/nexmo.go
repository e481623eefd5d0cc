// Package nexmo sends SMS through Vonage's SMS API (POST /sms/json), the
// provider Novu calls nexmo.
package nexmo

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/sms"
)

// Entry registers the provider.
var Entry = provider.Entry{
	ID: "nexmo", Channel: provider.SMS,
	Credentials: []provider.Credential{
		{Key: "apiKey", Required: true, Secret: true},
		{Key: "secretKey", Required: true, Secret: true},
		{Key: "from", Required: true},
		{Key: "baseUrl"},
	},
	New: New,
}

const origin = "https://rest.nexmo.com"

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

// gsm7 is the GSM 03.38 basic character set; other text goes as unicode.
const gsm7 = "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà^{}\\[~]|€"

func isGSM7(s string) bool {
	for _, r := range s {
		if !strings.ContainsRune(gsm7, r) {
			return false
		}
	}
	return true
}

// transient are the message statuses Vonage asks to retry: 1 Throttled, 5 Internal Error.
var transient = map[string]bool{"1": true, "5": true}

func (s *sender) Send(ctx context.Context, m *provider.Message) (*provider.Result, error) {
	c := s.cfg.Credentials
	to, from, err := sms.Parties(c, m)
	if err != nil {
		return nil, err
	}
	body := map[string]any{"api_key": c.String("apiKey"), "api_secret": c.String("secretKey"), "from": from,
		"to": strings.TrimPrefix(to, "+"), "text": m.Content, "client-ref": m.ID}
	if !isGSM7(m.Content) {
		body["type"] = "unicode"
	}
	body = provider.Merge(body, m.Overrides)
	req, err := provider.JSONRequest(s.base+"/sms/json", body, s.cfg.Secrets())
	if err != nil {
		return nil, err
	}
	resp, err := provider.Do(ctx, s.cfg.HTTP, req)
	if err != nil {
		return nil, err
	}
	if !resp.OK() {
		return nil, provider.StatusError(resp, "")
	}
	// Vonage answers 200 for failures too: the message's status says.
	var ans struct {
		Messages []struct {
			ID        string `json:"message-id"`
			Status    string `json:"status"`
			ErrorText string `json:"error-text"`
		} `json:"messages"`
	}
	if json.Unmarshal(resp.Body, &ans) != nil || len(ans.Messages) == 0 {
		return nil, &provider.Error{Class: provider.Transient, Status: resp.Status, Reason: "Vonage answered without a message status", Raw: resp.Raw}
	}
	first := ans.Messages[0]
	if first.Status != "0" {
		class := provider.Permanent
		if transient[first.Status] {
			class = provider.Transient
		}
		return nil, &provider.Error{Class: class, Status: resp.Status, Reason: "status " + first.Status + ": " + first.ErrorText, Raw: resp.Raw}
	}
	return &provider.Result{ProviderMessageID: first.ID, Raw: resp.Raw}, nil
}
