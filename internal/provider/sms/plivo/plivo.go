// Package plivo sends SMS through Plivo's Message API
// (POST /v1/Account/{auth_id}/Message/).
package plivo

import (
	"context"
	"encoding/json"
	"net/url"

	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/sms"
)

// Entry registers the provider: accountSid is Plivo's auth id, token its auth token.
var Entry = provider.Entry{
	ID: "plivo", Channel: provider.SMS,
	Credentials: []provider.Credential{
		{Key: "accountSid", Required: true},
		{Key: "token", Required: true, Secret: true},
		{Key: "from", Required: true},
		{Key: "baseUrl"},
	},
	New: New,
}

const origin = "https://api.plivo.com"

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
	body := provider.Merge(map[string]any{"src": from, "dst": to, "text": m.Content}, m.Overrides)
	id := c.String("accountSid")
	req, err := provider.JSONRequest(s.base+"/v1/Account/"+url.PathEscape(id)+"/Message/", body, s.cfg.Secrets())
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Basic "+provider.BasicAuth(id, c.String("token")))
	resp, err := provider.Do(ctx, s.cfg.HTTP, req)
	if err != nil {
		return nil, err
	}
	var ans struct {
		UUIDs []string `json:"message_uuid"`
		Error any      `json:"error"`
	}
	_ = json.Unmarshal(resp.Body, &ans)
	if !resp.OK() {
		reason := ""
		if ans.Error != nil {
			b, _ := json.Marshal(ans.Error)
			reason = string(b)
			if s, ok := ans.Error.(string); ok {
				reason = s
			}
		}
		return nil, provider.StatusError(resp, reason)
	}
	if len(ans.UUIDs) == 0 {
		return nil, &provider.Error{Class: provider.Permanent, Status: resp.Status, Reason: "Plivo answered without a message uuid", Raw: resp.Raw}
	}
	return &provider.Result{ProviderMessageID: ans.UUIDs[0], Raw: resp.Raw}, nil
}
