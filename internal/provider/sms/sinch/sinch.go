// Package sinch sends SMS through Sinch's SMS REST API (POST
// /xms/v1/{service_plan_id}/batches at https://{region}.sms.api.sinch.com).
package sinch

import (
	"context"
	"encoding/json"
	"net/url"
	"regexp"

	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/sms"
)

// Entry registers the provider.
var Entry = provider.Entry{
	ID: "sinch", Channel: provider.SMS,
	Credentials: []provider.Credential{
		{Key: "servicePlanId", Required: true},
		{Key: "apiToken", Required: true, Secret: true},
		{Key: "from", Required: true},
		{Key: "region"},
		{Key: "baseUrl"},
	},
	New: New,
}

// regionRE keeps the region a host label.
var regionRE = regexp.MustCompile(`^[a-z]{2,10}$`)

type sender struct {
	cfg  provider.Config
	base string
}

// New builds a sender for one integration; the region picks the origin
// (us by default) unless baseUrl replaces it.
func New(cfg provider.Config) (provider.Sender, error) {
	region := cfg.Credentials.String("region")
	if region == "" {
		region = "us"
	}
	if !regionRE.MatchString(region) {
		return nil, provider.Permanentf("credentials.region %q is not a Sinch region (us, eu, au, br, ca)", region)
	}
	base, err := provider.BaseURL(cfg.Credentials, "https://"+region+".sms.api.sinch.com")
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
	body := provider.Merge(map[string]any{"from": from, "to": []string{to}, "body": m.Content}, m.Overrides)
	req, err := provider.JSONRequest(s.base+"/xms/v1/"+url.PathEscape(c.String("servicePlanId"))+"/batches", body, s.cfg.Secrets())
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.String("apiToken"))
	resp, err := provider.Do(ctx, s.cfg.HTTP, req)
	if err != nil {
		return nil, err
	}
	var ans struct {
		ID   string `json:"id"`
		Code string `json:"code"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(resp.Body, &ans)
	if !resp.OK() {
		reason := ans.Text
		if ans.Code != "" {
			reason = ans.Code + ": " + ans.Text
		}
		return nil, provider.StatusError(resp, reason)
	}
	if ans.ID == "" {
		return nil, &provider.Error{Class: provider.Permanent, Status: resp.Status, Reason: "Sinch answered without a batch id", Raw: resp.Raw}
	}
	return &provider.Result{ProviderMessageID: ans.ID, Raw: resp.Raw}, nil
}
