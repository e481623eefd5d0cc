// Package ses delivers e-mail through Amazon SES's v2 API (SendEmail,
// POST /v2/email/outbound-emails), signing each request with AWS
// Signature Version 4.
package ses

import (
	"context"
	"encoding/json"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/email/ses/sigv4"
)

// Entry registers the provider.
var Entry = provider.Entry{
	ID: "ses", Channel: provider.Email,
	Credentials: []provider.Credential{
		{Key: "apiKey", Required: true, Secret: true},
		{Key: "secretKey", Required: true, Secret: true},
		{Key: "region", Required: true},
		{Key: "from", Required: true},
		{Key: "senderName"},
		{Key: "baseUrl"},
	},
	New:    New,
	Casing: provider.CasingPascal,
}

type sender struct {
	cfg provider.Config
	url *url.URL
	key sigv4.Key
}

// New builds a sender for one integration: apiKey is the access key id,
// secretKey the secret access key, region the SES region.
func New(cfg provider.Config) (provider.Sender, error) {
	c := cfg.Credentials
	region := c.String("region")
	if region == "" || strings.ContainsAny(region, "/ ") {
		return nil, provider.Permanentf("credentials.region %q is not an AWS region", region)
	}
	base, err := provider.BaseURL(c, "https://email."+region+".amazonaws.com")
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(base + "/v2/email/outbound-emails")
	if err != nil {
		return nil, provider.Permanentf("credentials.baseUrl: %v", err)
	}
	s := &sender{cfg: cfg, url: u,
		key: sigv4.Key{ID: c.String("apiKey"), Secret: c.String("secretKey"), Region: region, Service: "ses"}}
	if s.cfg.Now == nil {
		s.cfg.Now = time.Now
	}
	return s, nil
}

type content struct {
	Data    string `json:"Data"`
	Charset string `json:"Charset"`
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
	dest := map[string]any{"ToAddresses": m.To}
	if len(m.Cc) > 0 {
		dest["CcAddresses"] = m.Cc
	}
	if len(m.Bcc) > 0 {
		dest["BccAddresses"] = m.Bcc
	}
	bodyParts := map[string]any{}
	if m.HTML != "" {
		bodyParts["Html"] = content{m.HTML, "UTF-8"}
	}
	if m.Text != "" {
		bodyParts["Text"] = content{m.Text, "UTF-8"}
	}
	simple := map[string]any{"Subject": content{m.Subject, "UTF-8"}, "Body": bodyParts}
	if len(m.Headers) > 0 {
		var hs []map[string]string
		for k, v := range m.Headers {
			hs = append(hs, map[string]string{"Name": k, "Value": v})
		}
		sort.Slice(hs, func(i, j int) bool { return hs[i]["Name"] < hs[j]["Name"] })
		simple["Headers"] = hs
	}
	// SES wants a non-ASCII display name as an RFC 2047 encoded word, as
	// Address writes it.
	body := map[string]any{"FromEmailAddress": provider.Address(name, from), "Destination": dest,
		"Content": map[string]any{"Simple": simple}}
	if m.ReplyTo != "" {
		body["ReplyToAddresses"] = []string{m.ReplyTo}
	}
	if m.ID != "" {
		body["EmailTags"] = []map[string]string{{"Name": "heraldMessageId", "Value": tagValue(m.ID)}}
	}
	body = provider.Merge(body, m.Overrides)
	req, err := provider.JSONRequest(s.url.String(), body, s.cfg.Secrets())
	if err != nil {
		return nil, err
	}
	s.key.Sign(req.Method, s.url, req.Header, req.Body, s.cfg.Now())
	resp, err := provider.Do(ctx, s.cfg.HTTP, req)
	if err != nil {
		return nil, err
	}
	if !resp.OK() {
		return nil, classify(resp)
	}
	id := provider.Path(resp.Body, "MessageId")
	if id == "" {
		return nil, &provider.Error{Class: provider.Transient, Status: resp.Status, Reason: "SES answered without a MessageId", Raw: resp.Raw}
	}
	return &provider.Result{ProviderMessageID: id, Raw: resp.Raw}, nil
}

// tagValue keeps what SES allows in a tag: ASCII letters, digits,
// underscores, dashes, periods and at signs, at most 256.
func tagValue(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("_-.@", c) >= 0) {
			b[i] = '_'
		}
	}
	return string(b[:min(len(b), 256)])
}

// throttled are the error types SES answers when the sending rate is
// exceeded, whatever their status (the classic API's Throttling is a 400).
var throttled = map[string]bool{"TooManyRequestsException": true, "Throttling": true, "ThrottlingException": true}

// classify reads the error type (the X-Amzn-ErrorType header, else the
// body's __type or code) and message of an AWS REST-JSON error.
func classify(resp *provider.Response) *provider.Error {
	typ, _, _ := strings.Cut(resp.Header.Get("X-Amzn-ErrorType"), ":")
	var e struct {
		Type     string `json:"__type"`
		Code     string `json:"code"`
		Message  string `json:"message"`
		MessageU string `json:"Message"`
	}
	_ = json.Unmarshal(resp.Body, &e)
	if typ == "" {
		typ = e.Type
		if i := strings.LastIndexByte(typ, '#'); i >= 0 {
			typ = typ[i+1:]
		}
	}
	if typ == "" {
		typ = e.Code
	}
	msg := e.Message
	if msg == "" {
		msg = e.MessageU
	}
	reason := msg
	if typ != "" {
		reason = typ + ": " + msg
	}
	pe := provider.StatusError(resp, reason)
	if throttled[typ] {
		pe.Class = provider.Transient
	}
	return pe
}
