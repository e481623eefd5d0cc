// Package slackfake is Slack's wire fake: a local server that speaks its
// protocol, for the shared provider suite, end-to-end tests and the delivery
// benchmark. The herald binary never imports it (cmd/herald's
// TestBinaryHasNoTestCode checks).
package slackfake

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"

	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/providertest"
)

// Fake is a local server speaking Slack's incoming-webhook protocol.
type Fake struct {
	providertest.Base
	providertest.Server
	seq    atomic.Int64
	prefix string // random per fake, so request ids differ between fakes
}

// The webhook's team, hook id and token; a URL with another token is refused.
const (
	fakeTeam = "T0HERALD01"
	fakeHook = "B0HERALD02"
	// WebhookToken is the webhook URL's secret token.
	WebhookToken = "hEr4ldSl4ckT0kenAbCdEfGh"
)

// New starts one on loopback.
func New() *Fake {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	f := &Fake{prefix: hex.EncodeToString(b)}
	f.Serve(f.serve)
	return f
}

// URL is the fake's origin.
func (f *Fake) URL() string { return f.Srv.URL }

// WebhookURL is the incoming webhook's URL at the fake.
func (f *Fake) WebhookURL() string {
	return f.Srv.URL + "/services/" + fakeTeam + "/" + fakeHook + "/" + WebhookToken
}

// Credentials are empty: the webhook URL is the credential.
func (f *Fake) Credentials() provider.Credentials { return provider.Credentials{} }

// BadCredentials is nil: a wrong token is a wrong webhook URL (see Address).
func (f *Fake) BadCredentials() provider.Credentials { return nil }

// Address points the message at the fake's webhook.
func (f *Fake) Address(m *provider.Message) { m.WebhookURL = f.WebhookURL() }

// Traits of Slack webhooks: Retry-After on 429, JSON body, no origin.
func (f *Fake) Traits() providertest.Traits {
	return providertest.Traits{RetryAfter: true, Overrides: true}
}

// slackError answers as Slack does: a status and a plain-text error code.
func slackError(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "text/html")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, code)
}

func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	failure := f.Next()
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/services/"), "/")
	if r.Method != http.MethodPost || !strings.HasPrefix(r.URL.Path, "/services/") || len(parts) != 3 ||
		parts[0] != fakeTeam || parts[1] != fakeHook {
		slackError(w, http.StatusNotFound, "no_service")
		return
	}
	if parts[2] != WebhookToken {
		slackError(w, http.StatusForbidden, "invalid_token")
		return
	}
	switch failure {
	case providertest.Rejected:
		slackError(w, http.StatusNotFound, "channel_not_found")
		return
	case providertest.Unavailable:
		slackError(w, http.StatusInternalServerError, "rollup_error")
		return
	case providertest.RateLimited:
		w.Header().Set("Retry-After", "7")
		slackError(w, http.StatusTooManyRequests, "rate_limited")
		return
	case providertest.Hang:
		providertest.HangUntilGone(r)
		return
	}
	raw, _ := io.ReadAll(r.Body)
	payload := raw
	// Slack takes a JSON body, or a form whose "payload" field is the JSON.
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct == "application/x-www-form-urlencoded" {
		form, err := url.ParseQuery(string(raw))
		if err != nil {
			slackError(w, http.StatusBadRequest, "invalid_payload")
			return
		}
		payload = []byte(form.Get("payload"))
	}
	var body struct {
		Text        string          `json:"text"`
		Blocks      json.RawMessage `json:"blocks"`
		Attachments json.RawMessage `json:"attachments"`
	}
	if err := json.Unmarshal(payload, &body); err != nil {
		slackError(w, http.StatusBadRequest, "invalid_payload")
		return
	}
	if body.Text == "" && !nonEmptyArray(body.Blocks) && !nonEmptyArray(body.Attachments) {
		slackError(w, http.StatusBadRequest, "no_text")
		return
	}
	id := fmt.Sprintf("%s%024x", f.prefix, f.seq.Add(1))
	f.Record(providertest.Delivery{Content: body.Text, Header: r.Header.Clone(), Body: raw, MessageID: id})
	w.Header().Set("X-Slack-Req-Id", id)
	w.Header().Set("Content-Type", "text/html")
	_, _ = io.WriteString(w, "ok")
}

func nonEmptyArray(raw json.RawMessage) bool {
	var a []json.RawMessage
	return json.Unmarshal(raw, &a) == nil && len(a) > 0
}
