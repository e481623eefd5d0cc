// Package discord delivers chat messages through Discord's Execute Webhook
// endpoint (https://discord.com/api/webhooks/{id}/{token}).
package discord

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/chat/hook"
)

// Entry registers the provider. Discord webhooks take no credential beyond
// their URL; webhookUrl is the integration-wide fallback destination.
var Entry = provider.Entry{
	ID: "discord", Channel: provider.Chat,
	Credentials: []provider.Credential{
		{Key: "webhookUrl"},
	},
	New:    New,
	Casing: provider.CasingSnake,
}

type sender struct{ cfg provider.Config }

// New builds a sender for one integration.
func New(cfg provider.Config) (provider.Sender, error) { return &sender{cfg: cfg}, nil }

func (s *sender) Send(ctx context.Context, m *provider.Message) (*provider.Result, error) {
	t, err := hook.Parse(m.WebhookURL)
	if err != nil {
		return nil, err
	}
	// wait=true makes Discord answer with the created message (and its id)
	// instead of 204; the URL's own parameters (thread_id) are kept.
	u := *t.URL
	q := u.Query()
	q.Set("wait", "true")
	u.RawQuery = q.Encode()
	body := provider.Merge(map[string]any{"content": m.Content}, m.Overrides)
	req, err := provider.JSONRequest(u.String(), body, t.Secrets(s.cfg.Secrets()...))
	if err != nil {
		return nil, err
	}
	resp, err := hook.Do(ctx, s.cfg.HTTP, req)
	if err != nil {
		return nil, err
	}
	if !resp.OK() {
		var e apiError
		_ = json.Unmarshal(resp.Body, &e)
		pe := hook.Fail(resp, e.reason(), req.Secrets)
		if pe.Class == provider.Transient && pe.RetryAfter == 0 && e.RetryAfter > 0 {
			pe.RetryAfter = time.Duration(min(e.RetryAfter, 86400) * float64(time.Second))
		}
		return nil, pe
	}
	return &provider.Result{ProviderMessageID: provider.Path(resp.Body, "id"), Raw: resp.Raw}, nil
}

// apiError is Discord's error body; a rate limit adds retry_after (seconds).
type apiError struct {
	Message    string          `json:"message"`
	Code       int             `json:"code"`
	Errors     json.RawMessage `json:"errors"`
	RetryAfter float64         `json:"retry_after"`
	Global     bool            `json:"global"`
}

func (e apiError) reason() string {
	if e.Message == "" {
		return ""
	}
	s := e.Message
	if e.Code != 0 {
		s = fmt.Sprintf("%s (code %d)", s, e.Code)
	}
	// Invalid Form Body (50035) nests the field errors; the first says which field.
	if field, msg := firstFieldError(e.Errors, ""); msg != "" {
		s += ": " + field + ": " + msg
	}
	return s
}

// firstFieldError walks Discord's nested {"field":{"_errors":[{code,message}]}}.
func firstFieldError(raw json.RawMessage, path string) (string, string) {
	var obj map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &obj) != nil {
		return "", ""
	}
	if errs, ok := obj["_errors"]; ok {
		var list []struct{ Message string }
		if json.Unmarshal(errs, &list) == nil && len(list) > 0 {
			return path, list[0].Message
		}
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p := k
		if path != "" {
			p = path + "." + k
		}
		if f, m := firstFieldError(obj[k], p); m != "" {
			return f, m
		}
	}
	return "", ""
}
