// Package discordfake is Discord's wire fake: a local server that speaks its
// protocol, for the shared provider suite, end-to-end tests and the delivery
// benchmark. The herald binary never imports it (cmd/herald's
// TestBinaryHasNoTestCode checks).
package discordfake

import (
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"regexp"
	"strconv"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/providertest"
)

// Fake is a local server speaking Discord's Execute Webhook endpoint.
type Fake struct {
	providertest.Base
	providertest.Server
	seq atomic.Int64
}

// The webhook's id and token; a URL with another token is refused.
const (
	// WebhookID is the webhook's id.
	WebhookID = "1187654321098765432"
	// WebhookToken is the webhook's token.
	WebhookToken  = "hErAlD-d1sc0rd_w3bh00k-T0ken-aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789abcd"
	fakeChannelID = "1100000000000000001"
	// discordEpoch is the first millisecond of 2015, where snowflakes count from.
	discordEpoch = 1420070400000
	maxContent   = 2000
)

var webhookPath = regexp.MustCompile(`^/api(?:/v\d+)?/webhooks/([^/]+)/([^/]+)$`)

// New starts one on loopback.
func New() *Fake {
	f := &Fake{}
	f.Serve(f.serve)
	return f
}

// URL is the fake's origin.
func (f *Fake) URL() string { return f.Srv.URL }

// WebhookURL is the webhook's URL at the fake, as Discord shows it.
func (f *Fake) WebhookURL() string {
	return f.Srv.URL + "/api/webhooks/" + WebhookID + "/" + WebhookToken
}

// Credentials are empty: the webhook URL is the credential.
func (f *Fake) Credentials() provider.Credentials { return provider.Credentials{} }

// BadCredentials is nil: a wrong token is a wrong webhook URL.
func (f *Fake) BadCredentials() provider.Credentials { return nil }

// Address points the message at the fake's webhook.
func (f *Fake) Address(m *provider.Message) { m.WebhookURL = f.WebhookURL() }

// Traits of Discord webhooks: Retry-After on 429, JSON body, no origin.
func (f *Fake) Traits() providertest.Traits {
	return providertest.Traits{RetryAfter: true, Overrides: true}
}

func discordError(w http.ResponseWriter, status int, body map[string]any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	failure := f.Next()
	m := webhookPath.FindStringSubmatch(r.URL.Path)
	if m == nil {
		discordError(w, http.StatusNotFound, map[string]any{"message": "404: Not Found", "code": 0})
		return
	}
	if r.Method != http.MethodPost {
		discordError(w, http.StatusMethodNotAllowed, map[string]any{"message": "405: Method Not Allowed", "code": 0})
		return
	}
	if m[1] != WebhookID {
		discordError(w, http.StatusNotFound, map[string]any{"message": "Unknown Webhook", "code": 10015})
		return
	}
	if m[2] != WebhookToken {
		discordError(w, http.StatusUnauthorized, map[string]any{"message": "Invalid Webhook Token", "code": 50027})
		return
	}
	switch failure {
	case providertest.Rejected:
		discordError(w, http.StatusNotFound, map[string]any{"message": "Unknown Channel", "code": 10003})
		return
	case providertest.Unavailable:
		discordError(w, http.StatusInternalServerError, map[string]any{"message": "500: Internal Server Error", "code": 0})
		return
	case providertest.RateLimited:
		w.Header().Set("Retry-After", "7")
		w.Header().Set("X-RateLimit-Limit", "5")
		w.Header().Set("X-RateLimit-Remaining", "0")
		w.Header().Set("X-RateLimit-Reset-After", "7.000")
		w.Header().Set("X-RateLimit-Scope", "shared")
		discordError(w, http.StatusTooManyRequests,
			map[string]any{"message": "You are being rate limited.", "retry_after": 7.0, "global": false})
		return
	case providertest.Hang:
		providertest.HangUntilGone(r)
		return
	}
	raw, _ := io.ReadAll(r.Body)
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct != "application/json" {
		discordError(w, http.StatusBadRequest, map[string]any{"message": "Cannot send an empty message", "code": 50006})
		return
	}
	var body struct {
		Content  string            `json:"content"`
		Embeds   []json.RawMessage `json:"embeds"`
		Username string            `json:"username"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		discordError(w, http.StatusBadRequest, map[string]any{"message": "The request body contains invalid JSON.", "code": 50109})
		return
	}
	if body.Content == "" && len(body.Embeds) == 0 {
		discordError(w, http.StatusBadRequest, map[string]any{"message": "Cannot send an empty message", "code": 50006})
		return
	}
	if utf8.RuneCountInString(body.Content) > maxContent {
		discordError(w, http.StatusBadRequest, map[string]any{"message": "Invalid Form Body", "code": 50035,
			"errors": map[string]any{"content": map[string]any{"_errors": []map[string]string{
				{"code": "BASE_TYPE_MAX_LENGTH", "message": "Must be 2000 or fewer in length."}}}}})
		return
	}
	now := time.Now().UTC()
	id := strconv.FormatInt((now.UnixMilli()-discordEpoch)<<22|(f.seq.Add(1)&0x3fffff), 10)
	f.Record(providertest.Delivery{Content: body.Content, Header: r.Header.Clone(), Body: raw, MessageID: id})
	if r.URL.Query().Get("wait") != "true" {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	username := body.Username
	if username == "" {
		username = "Herald"
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": id, "type": 0, "content": body.Content, "channel_id": fakeChannelID,
		"author":      map[string]any{"id": WebhookID, "username": username, "avatar": nil, "discriminator": "0000", "bot": true},
		"attachments": []any{}, "embeds": nonNil(body.Embeds), "mentions": []any{}, "mention_roles": []any{},
		"pinned": false, "mention_everyone": false, "tts": false, "timestamp": now.Format("2006-01-02T15:04:05.000000+00:00"),
		"edited_timestamp": nil, "flags": 0, "components": []any{}, "webhook_id": WebhookID,
	})
}

func nonNil(l []json.RawMessage) []json.RawMessage {
	if l == nil {
		return []json.RawMessage{}
	}
	return l
}
