// Package hook holds what Herald's chat providers share. Every one of them
// posts JSON to a webhook URL that a subscriber (or the integration)
// supplied; that URL embeds the token that authorizes the post, so it is
// handled as a secret: checked before anything is sent, and kept out of
// every error text and raw answer.
package hook

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/herald-notify/herald/internal/provider"
)

// Missing is the reason of a chat message that has no webhook URL.
const Missing = "Webhook URL for the chat channel is missing"

// minSecretPart is the length from which a path segment or query value of
// a webhook URL is taken for a token and redacted on its own.
const minSecretPart = 16

// Target is a checked webhook URL.
type Target struct {
	// URL is the parsed URL; callers may add query parameters to a copy.
	URL *url.URL
	raw string
}

// Parse checks a webhook URL: present, absolute, http or https. Its
// failures are permanent and never show the URL.
func Parse(raw string) (*Target, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return nil, provider.Permanentf(Missing)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, provider.Permanentf("the chat webhook URL is not a valid URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, provider.Permanentf("the chat webhook URL must be http or https")
	}
	if u.Host == "" {
		return nil, provider.Permanentf("the chat webhook URL has no host")
	}
	return &Target{URL: u, raw: raw}, nil
}

// String is the URL as it was given.
func (t *Target) String() string { return t.raw }

// Secrets lists what must be redacted from answers and errors: the whole
// URL in its spellings, its path and query, its user information, and each
// path segment or query value long enough to be a token, plus extra (the
// credentials' secrets). Longest first, so a whole URL is replaced before
// its parts.
func (t *Target) Secrets(extra ...string) []string {
	set := map[string]bool{}
	add := func(s string) {
		if len(s) >= 4 {
			set[s] = true
		}
	}
	u := t.URL
	add(t.raw)
	add(u.String())
	add(u.Host + u.EscapedPath())
	add(u.EscapedPath())
	add(u.Path)
	add(u.RawQuery)
	if u.User != nil {
		add(u.User.String())
		if p, ok := u.User.Password(); ok {
			add(p)
		}
	}
	for _, seg := range strings.Split(u.EscapedPath(), "/") {
		if len(seg) >= minSecretPart {
			add(seg)
			if s, err := url.PathUnescape(seg); err == nil {
				add(s)
			}
		}
	}
	for _, vs := range u.Query() {
		for _, v := range vs {
			if len(v) >= minSecretPart {
				add(v)
				add(url.QueryEscape(v))
			}
		}
	}
	for _, s := range extra {
		add(s)
	}
	out := make([]string, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		if len(out[i]) != len(out[j]) {
			return len(out[i]) > len(out[j])
		}
		return out[i] < out[j]
	})
	return out
}

// Do makes the call like provider.Do, and also scrubs the URL from the
// error it wraps (a *url.Error carries the whole URL), so that nothing
// logging the cause sees the token.
func Do(ctx context.Context, client *http.Client, req *provider.Request) (*provider.Response, error) {
	resp, err := provider.Do(ctx, client, req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			ue.URL = provider.Redact(ue.URL, req.Secrets)
		}
		var pe *provider.Error
		if errors.As(err, &pe) {
			pe.Reason = provider.Redact(pe.Reason, req.Secrets)
		}
		return nil, err
	}
	return resp, nil
}

// Fail classifies a non-2xx answer (provider.StatusError) with the
// provider's reason, redacted.
func Fail(resp *provider.Response, reason string, secrets []string) *provider.Error {
	return provider.StatusError(resp, provider.Redact(reason, secrets))
}

// maxReason bounds a reason taken from a plain-text answer.
const maxReason = 300

// Text makes a plain-text answer a reason: its first line, trimmed and
// bounded ("" for an empty answer, or an HTML page from a proxy in front).
func Text(body []byte) string {
	s := strings.TrimSpace(string(body))
	if strings.HasPrefix(s, "<") {
		return ""
	}
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	if len(s) > maxReason {
		s = s[:maxReason]
		for !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
		s += "…"
	}
	return s
}
