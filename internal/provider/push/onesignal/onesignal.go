// Package onesignal delivers push notifications through OneSignal's Create
// message API: one request for every device token (subscription id) of the
// subscriber.
//
// It speaks the current API (POST https://api.onesignal.com/notifications,
// "Authorization: Key <apiKey>", include_subscription_ids). Novu used the
// legacy endpoint (onesignal.com/api/v1/notifications, "Authorization:
// Basic", include_player_ids); a credentials.baseUrl whose path ends in
// /api/v1 (https://onesignal.com/api/v1) selects that dialect. Player ids
// and subscription ids are the same ids, so the subscribers' device tokens
// work with either.
package onesignal

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/push"
)

// Entry registers the provider.
var Entry = provider.Entry{
	ID: "one-signal", Channel: provider.Push,
	Credentials: []provider.Credential{
		{Key: "applicationId", Required: true},
		{Key: "apiKey", Required: true, Secret: true},
		{Key: "baseUrl"},
	},
	New:    New,
	Casing: provider.CasingSnake,
}

const origin = "https://api.onesignal.com"

type sender struct {
	cfg    provider.Config
	base   string
	legacy bool
}

// New builds a sender for one integration.
func New(cfg provider.Config) (provider.Sender, error) {
	base, err := provider.BaseURL(cfg.Credentials, origin)
	if err != nil {
		return nil, err
	}
	u, _ := url.Parse(base)
	return &sender{cfg: cfg, base: base, legacy: strings.HasSuffix(u.Path, "/api/v1")}, nil
}

// IdempotencyKey is the idempotency_key OneSignal gets for a message's key:
// OneSignal takes UUIDs only, so other keys become a UUID derived from them
// (the same on every retry).
func IdempotencyKey(key string) string {
	if key == "" || push.IsUUID(key) {
		return key
	}
	return push.UUID("one-signal", key)
}

// Send delivers m to its device tokens in one request.
func (s *sender) Send(ctx context.Context, m *provider.Message) (*provider.Result, error) {
	// Subscription ids are UUIDs: OneSignal refuses the whole request for
	// one that is not, so such tokens are dropped as invalid without a call.
	var tokens, malformed []string
	for _, t := range m.Tokens {
		if push.IsUUID(t) {
			tokens = append(tokens, t)
		} else {
			malformed = append(malformed, t)
		}
	}
	if len(tokens) == 0 {
		if len(malformed) == 0 {
			return nil, provider.Permanentf("no device token to send to")
		}
		return nil, &provider.Error{Class: provider.TokenInvalid, InvalidTokens: malformed,
			Reason: "no device token is a OneSignal subscription id (a UUID)"}
	}
	c := s.cfg.Credentials
	body := map[string]any{"app_id": c.String("applicationId"), "contents": map[string]any{"en": m.Content}}
	if m.Subject != "" {
		body["headings"] = map[string]any{"en": m.Subject}
	}
	if m.Data != nil {
		body["data"] = m.Data
	}
	if key := IdempotencyKey(m.IdempotencyKey); key != "" {
		body["idempotency_key"] = key
	}
	u, auth := s.base+"/notifications?c=push", "Key "
	if s.legacy {
		u, auth = s.base+"/notifications", "Basic "
		body["include_player_ids"] = tokens
	} else {
		body["include_subscription_ids"] = tokens
	}
	body = provider.Merge(body, m.Overrides)
	req, err := provider.JSONRequest(u, body, s.cfg.Secrets())
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", auth+c.String("apiKey"))
	resp, err := provider.Do(ctx, s.cfg.HTTP, req)
	if err != nil {
		return nil, err
	}
	var a struct {
		ID     string          `json:"id"`
		Errors json.RawMessage `json:"errors"`
	}
	_ = json.Unmarshal(resp.Body, &a)
	messages, invalid, listed := readErrors(a.Errors)
	reason := strings.Join(messages, "; ")
	if !resp.OK() {
		e := provider.StatusError(resp, reason)
		e.InvalidTokens = malformed
		return nil, e
	}
	refused := slices.Clone(malformed)
	for _, t := range tokens {
		if slices.Contains(invalid, t) {
			refused = append(refused, t)
		}
	}
	if a.ID != "" {
		return &provider.Result{ProviderMessageID: a.ID, Raw: resp.Raw, InvalidTokens: refused}, nil
	}
	// No message was created. When that is for want of a subscribed
	// recipient, every token is invalid: OneSignal lists the unsubscribed
	// ones and does not report the ids it does not know.
	if listed || notSubscribed(messages) {
		if reason == "" {
			reason = "no subscribed recipient"
		}
		return nil, &provider.Error{Class: provider.TokenInvalid, Status: resp.Status, Reason: reason, Raw: resp.Raw,
			InvalidTokens: slices.Clone(m.Tokens)}
	}
	if reason == "" {
		reason = "OneSignal created no message"
	}
	return nil, &provider.Error{Class: provider.Permanent, Status: resp.Status, Reason: reason, Raw: resp.Raw,
		InvalidTokens: refused}
}

// readErrors reads OneSignal's errors: a list of messages, or an object
// listing the invalid recipients (invalid_player_ids, invalid_aliases).
// listed says whether the object named invalid recipients.
func readErrors(raw json.RawMessage) (messages, invalid []string, listed bool) {
	var list []any
	if json.Unmarshal(raw, &list) == nil {
		for _, e := range list {
			if s, ok := e.(string); ok {
				messages = append(messages, s)
			} else {
				b, _ := json.Marshal(e)
				messages = append(messages, string(b))
			}
		}
		return messages, nil, false
	}
	var obj struct {
		InvalidPlayerIDs []string            `json:"invalid_player_ids"`
		InvalidAliases   map[string][]string `json:"invalid_aliases"`
	}
	if json.Unmarshal(raw, &obj) != nil {
		return nil, nil, false
	}
	if len(obj.InvalidPlayerIDs) > 0 {
		messages = append(messages, fmt.Sprintf("%d unsubscribed recipient(s)", len(obj.InvalidPlayerIDs)))
	}
	for label, ids := range obj.InvalidAliases {
		messages = append(messages, fmt.Sprintf("%d unsubscribed %s alias(es)", len(ids), label))
	}
	return messages, obj.InvalidPlayerIDs, len(obj.InvalidPlayerIDs) > 0 || len(obj.InvalidAliases) > 0
}

func notSubscribed(messages []string) bool {
	for _, s := range messages {
		if strings.Contains(strings.ToLower(s), "not subscribed") {
			return true
		}
	}
	return false
}
