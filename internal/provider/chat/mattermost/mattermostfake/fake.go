// Package mattermostfake is Mattermost's wire fake: a local server that speaks
// its protocol, for the shared provider suite, end-to-end tests and the
// delivery benchmark. The herald binary never imports it (cmd/herald's
// TestBinaryHasNoTestCode checks).
package mattermostfake

import (
	"crypto/rand"
	"encoding/base32"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/providertest"
)

// Fake is a local Mattermost server's incoming-webhook endpoint.
type Fake struct {
	providertest.Base
	providertest.Server
}

// HookID is the incoming webhook's key; another key is an unknown hook.
const HookID = "h3ra1dm4tt3rm0st5ecr3tk3yx"

// New starts one on loopback.
func New() *Fake {
	f := &Fake{}
	f.Serve(f.serve)
	return f
}

// URL is the fake server's origin.
func (f *Fake) URL() string { return f.Srv.URL }

// WebhookURL is the incoming webhook's URL at the fake.
func (f *Fake) WebhookURL() string { return f.Srv.URL + "/hooks/" + HookID }

// Credentials are empty: the webhook URL is the credential.
func (f *Fake) Credentials() provider.Credentials { return provider.Credentials{} }

// BadCredentials is nil: a wrong key is a wrong webhook URL.
func (f *Fake) BadCredentials() provider.Credentials { return nil }

// Address points the message at the fake's webhook.
func (f *Fake) Address(m *provider.Message) { m.WebhookURL = f.WebhookURL() }

// Traits of Mattermost webhooks: Retry-After from its rate limiter, JSON body, no origin.
func (f *Fake) Traits() providertest.Traits {
	return providertest.Traits{RetryAfter: true, Overrides: true}
}

// newID is a Mattermost id: 26 characters of lower-case base32.
func newID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b))
}

func appErr(w http.ResponseWriter, status int, id, msg string) {
	rid := newID()
	w.Header().Set("X-Request-Id", rid)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"id": id, "message": msg, "detailed_error": "",
		"request_id": rid, "status_code": status})
}

func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	failure := f.Next()
	key, ok := strings.CutPrefix(r.URL.Path, "/hooks/")
	if !ok || r.Method != http.MethodPost {
		appErr(w, http.StatusNotFound, "api.context.404.app_error", "Sorry, we could not find the page.")
		return
	}
	if key != HookID {
		appErr(w, http.StatusBadRequest, "web.incoming_webhook.invalid.app_error", "Invalid webhook.")
		return
	}
	switch failure {
	case providertest.Rejected:
		appErr(w, http.StatusForbidden, "web.incoming_webhook.channel_locked.app_error",
			"This webhook is not permitted to post to the requested channel.")
		return
	case providertest.Unavailable:
		appErr(w, http.StatusServiceUnavailable, "api.context.server_busy.app_error",
			"Server is busy, non-critical services are temporarily unavailable.")
		return
	case providertest.RateLimited:
		// Mattermost's rate limiter answers in plain text with its headers.
		w.Header().Set("Retry-After", "7")
		w.Header().Set("X-Ratelimit-Limit", "10")
		w.Header().Set("X-Ratelimit-Remaining", "0")
		w.Header().Set("X-Ratelimit-Reset", "7")
		http.Error(w, "limit exceeded", http.StatusTooManyRequests)
		return
	case providertest.Hang:
		providertest.HangUntilGone(r)
		return
	}
	raw, _ := io.ReadAll(r.Body)
	payload := raw
	// Mattermost takes a JSON body or a form whose "payload" field is the JSON.
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct == "application/x-www-form-urlencoded" {
		form, err := url.ParseQuery(string(raw))
		if err != nil {
			appErr(w, http.StatusBadRequest, "api.webhook.incoming.parse.app_error", "Unable to parse incoming data.")
			return
		}
		payload = []byte(form.Get("payload"))
	}
	var body struct {
		Text        string            `json:"text"`
		Channel     string            `json:"channel"`
		Username    string            `json:"username"`
		IconURL     string            `json:"icon_url"`
		Attachments []json.RawMessage `json:"attachments"`
	}
	if err := json.Unmarshal(payload, &body); err != nil {
		appErr(w, http.StatusBadRequest, "api.webhook.incoming.parse.app_error", "Unable to parse incoming data.")
		return
	}
	if body.Text == "" && len(body.Attachments) == 0 {
		appErr(w, http.StatusBadRequest, "web.incoming_webhook.text.app_error", "No text specified.")
		return
	}
	id := newID()
	f.Record(providertest.Delivery{Content: body.Text, Header: r.Header.Clone(), Body: raw, MessageID: id})
	w.Header().Set("X-Request-Id", id)
	w.Header().Set("X-Version-Id", "9.11.0.fake")
	w.Header().Set("Content-Type", "text/plain")
	_, _ = io.WriteString(w, "ok")
}
