// Package expo delivers push notifications through the Expo push service:
// one message per device token, up to 100 messages a request, answered
// with a push ticket per message.
package expo

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/push"
)

// Entry registers the provider. The access token is optional: Expo asks
// for it only when the project enabled enhanced push security.
var Entry = provider.Entry{
	ID: "expo", Channel: provider.Push,
	Credentials: []provider.Credential{
		{Key: "apiKey", Secret: true},
		{Key: "baseUrl"},
	},
	New: New,
}

const (
	origin = "https://exp.host"
	// maxBatch is the most messages Expo takes in one request.
	maxBatch = 100
)

// pushToken is the shape of an Expo push token (as expo-server-sdk checks it).
var pushToken = regexp.MustCompile(`^(?:(?:ExponentPushToken|ExpoPushToken)\[.+\]|(?i:[a-z\d]{8}-[a-z\d]{4}-[a-z\d]{4}-[a-z\d]{4}-[a-z\d]{12}))$`)

// IsPushToken reports whether s has the shape of an Expo push token.
func IsPushToken(s string) bool { return pushToken.MatchString(s) }

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

// Send delivers m to every device token (see package push for the rules).
func (s *sender) Send(ctx context.Context, m *provider.Message) (*provider.Result, error) {
	var out push.Outcome
	var tokens []string
	for _, t := range m.Tokens {
		if IsPushToken(t) {
			tokens = append(tokens, t)
		} else {
			// Expo could never deliver to it: it is dropped without a call.
			out.Invalid(t, push.Refused(0, fmt.Sprintf("%q is not an Expo push token", t), ""))
		}
	}
	for start := 0; start < len(tokens); start += maxBatch {
		if s.sendBatch(ctx, m, tokens[start:min(start+maxBatch, len(tokens))], &out) || ctx.Err() != nil {
			break
		}
	}
	return out.Result()
}

// ticket is Expo's answer for one message.
type ticket struct {
	Status  string `json:"status"`
	ID      string `json:"id"`
	Message string `json:"message"`
	Details struct {
		Error string `json:"error"`
	} `json:"details"`
}

// answer is the body of Expo's response: tickets, or request errors.
type answer struct {
	Data   json.RawMessage `json:"data"`
	Errors []struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"errors"`
}

func (a answer) reason() string {
	var parts []string
	for _, e := range a.Errors {
		parts = append(parts, strings.TrimPrefix(e.Code+": "+e.Message, ": "))
	}
	return strings.Join(parts, "; ")
}

// sendBatch sends one request; it reports whether the remaining batches
// would fail the same way (credentials, rate limit).
func (s *sender) sendBatch(ctx context.Context, m *provider.Message, tokens []string, out *push.Outcome) bool {
	c := s.cfg.Credentials
	msgs := make([]map[string]any, len(tokens))
	for i, t := range tokens {
		msg := map[string]any{"to": t, "body": m.Content}
		if m.Subject != "" {
			msg["title"] = m.Subject
		}
		if m.Data != nil {
			msg["data"] = m.Data
		}
		msgs[i] = provider.Merge(msg, m.Overrides)
	}
	req, err := provider.JSONRequest(s.base+"/--/api/v2/push/send", msgs, s.cfg.Secrets())
	if err != nil {
		out.Failed(provider.AsError(err))
		return true
	}
	if key := c.String("apiKey"); key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := provider.Do(ctx, s.cfg.HTTP, req)
	if err != nil {
		out.Failed(provider.AsError(err))
		return true
	}
	out.Answer(resp.Raw)
	var a answer
	_ = json.Unmarshal(resp.Body, &a)
	if !resp.OK() {
		out.Failed(provider.StatusError(resp, a.reason()))
		return resp.Status == 401 || resp.Status == 403 || resp.Status == 429
	}
	tickets, err := a.tickets()
	if err != nil || len(tickets) != len(tokens) {
		if len(a.Errors) > 0 {
			e := &provider.Error{Class: provider.Permanent, Status: resp.Status, Reason: a.reason(), Raw: resp.Raw}
			if a.Errors[0].Code == "TOO_MANY_REQUESTS" {
				e.Class = provider.Transient
			}
			out.Failed(e)
			return true
		}
		out.Failed(&provider.Error{Class: provider.Permanent, Status: resp.Status, Raw: resp.Raw,
			Reason: fmt.Sprintf("Expo answered %d push tickets for %d messages", len(tickets), len(tokens))})
		return false
	}
	for i, t := range tickets {
		if t.Status == "ok" {
			out.Delivered(t.ID)
			continue
		}
		reason := strings.TrimPrefix(t.Details.Error+": "+t.Message, ": ")
		switch t.Details.Error {
		case "DeviceNotRegistered":
			out.Invalid(tokens[i], push.Refused(0, reason, resp.Raw))
		case "MessageRateExceeded":
			out.Failed(&provider.Error{Class: provider.Transient, Reason: reason, Raw: resp.Raw})
		default: // MessageTooBig, InvalidCredentials, MismatchSenderId…
			out.Failed(&provider.Error{Class: provider.Permanent, Reason: reason, Raw: resp.Raw})
		}
	}
	return false
}

// tickets reads data: an array of tickets, or one ticket.
func (a answer) tickets() ([]ticket, error) {
	d := strings.TrimSpace(string(a.Data))
	if strings.HasPrefix(d, "{") {
		var t ticket
		err := json.Unmarshal(a.Data, &t)
		return []ticket{t}, err
	}
	var ts []ticket
	err := json.Unmarshal(a.Data, &ts)
	return ts, err
}
