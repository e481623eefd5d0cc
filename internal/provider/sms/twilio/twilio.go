// Package twilio sends SMS through Twilio's Programmable Messaging API
// (POST /2010-04-01/Accounts/{AccountSid}/Messages.json).
package twilio

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/sms"
)

// Entry registers the provider.
var Entry = provider.Entry{
	ID: "twilio", Channel: provider.SMS,
	Credentials: []provider.Credential{
		{Key: "accountSid", Required: true},
		{Key: "token", Required: true, Secret: true},
		{Key: "from", Required: true},
		{Key: "baseUrl"},
	},
	New: New,
}

const origin = "https://api.twilio.com"

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
	to, from, err := sms.Parties(c, m)
	if err != nil {
		return nil, err
	}
	form := url.Values{"To": {to}, "Body": {m.Content}}
	// A Messaging Service sends from its own pool of numbers.
	if strings.HasPrefix(from, "MG") {
		form.Set("MessagingServiceSid", from)
	} else {
		form.Set("From", from)
	}
	for k, v := range m.Overrides {
		form.Set(k, fmt.Sprint(v))
	}
	sid := c.String("accountSid")
	req := provider.FormRequest(s.base+"/2010-04-01/Accounts/"+url.PathEscape(sid)+"/Messages.json", form, s.cfg.Secrets())
	req.Header.Set("Authorization", "Basic "+provider.BasicAuth(sid, c.String("token")))
	resp, err := provider.Do(ctx, s.cfg.HTTP, req)
	if err != nil {
		return nil, err
	}
	var body struct {
		SID     string `json:"sid"`
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	_ = json.Unmarshal(resp.Body, &body)
	if !resp.OK() {
		reason := body.Message
		if body.Code != 0 {
			reason = fmt.Sprintf("%s (code %d)", body.Message, body.Code)
		}
		return nil, provider.StatusError(resp, reason)
	}
	if body.SID == "" {
		return nil, &provider.Error{Class: provider.Permanent, Status: resp.Status, Reason: "Twilio answered without a message sid", Raw: resp.Raw}
	}
	return &provider.Result{ProviderMessageID: body.SID, Raw: resp.Raw}, nil
}
