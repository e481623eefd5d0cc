// Package chatwebhookfake is the chat webhook provider's wire fake: a local
// server that speaks its protocol, for the shared provider suite, end-to-end
// tests and the delivery benchmark. The herald binary never imports it
// (cmd/herald's TestBinaryHasNoTestCode checks).
package chatwebhookfake

import (
	"crypto/hmac"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/chat/chatwebhook"
	"github.com/herald-notify/herald/internal/provider/providertest"
)

// Fake is a receiver of Novu-style chat webhooks: it verifies the
// X-Novu-Signature HMAC over the raw body and answers {"id"}.
type Fake struct {
	providertest.Base
	providertest.Server
	seq atomic.Int64
}

const (
	fakeSecret = "hErAlD-chat-webhook-hmac-key-0123456789"
	fakeToken  = "cHaTw3bh00kT0ken-4f7a9c2e"
	hookPrefix = "/chat-hook/"
)

// New starts one on loopback.
func New() *Fake {
	f := &Fake{}
	f.Serve(f.serve)
	return f
}

// URL is the fake's origin.
func (f *Fake) URL() string { return f.Srv.URL }

// WebhookURL is the receiver's URL at the fake (its path carries a token).
func (f *Fake) WebhookURL() string { return f.Srv.URL + hookPrefix + fakeToken + "?source=herald" }

// Credentials hold the HMAC key the fake verifies.
func (f *Fake) Credentials() provider.Credentials {
	return provider.Credentials{"secretKey": fakeSecret}
}

// BadCredentials hold another key: the signature does not verify.
func (f *Fake) BadCredentials() provider.Credentials {
	return provider.Credentials{"secretKey": "wrong-hmac-key-9876543210"}
}

// Address points the message at the fake's receiver.
func (f *Fake) Address(m *provider.Message) { m.WebhookURL = f.WebhookURL() }

// Traits of the generic webhook: Retry-After on 429, JSON body, no origin.
func (f *Fake) Traits() providertest.Traits {
	return providertest.Traits{RetryAfter: true, Overrides: true}
}

func jsonAnswer(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	failure := f.Next()
	token, ok := strings.CutPrefix(r.URL.Path, hookPrefix)
	if !ok || token != fakeToken || r.Method != http.MethodPost {
		jsonAnswer(w, http.StatusNotFound, map[string]string{"error": "unknown webhook"})
		return
	}
	raw, _ := io.ReadAll(r.Body)
	got, err := hex.DecodeString(r.Header.Get(chatwebhook.SignatureHeader))
	want, _ := hex.DecodeString(chatwebhook.Sign(fakeSecret, raw))
	if err != nil || !hmac.Equal(got, want) {
		jsonAnswer(w, http.StatusUnauthorized, map[string]string{"error": "invalid signature"})
		return
	}
	switch failure {
	case providertest.Rejected:
		jsonAnswer(w, http.StatusUnprocessableEntity, map[string]string{"message": "channel does not accept messages"})
		return
	case providertest.Unavailable:
		jsonAnswer(w, http.StatusServiceUnavailable, map[string]string{"message": "receiver unavailable"})
		return
	case providertest.RateLimited:
		w.Header().Set("Retry-After", "7")
		jsonAnswer(w, http.StatusTooManyRequests, map[string]string{"message": "too many requests"})
		return
	case providertest.Hang:
		providertest.HangUntilGone(r)
		return
	}
	var body struct {
		Content    *string `json:"content"`
		WebhookURL string  `json:"webhookUrl"`
	}
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct != "application/json" ||
		json.Unmarshal(raw, &body) != nil || body.Content == nil {
		jsonAnswer(w, http.StatusBadRequest, map[string]string{"message": "content is required"})
		return
	}
	// Novu sends the URL it posts to in the body; it must be this one.
	if body.WebhookURL != f.Srv.URL+r.URL.RequestURI() {
		jsonAnswer(w, http.StatusBadRequest, map[string]string{"message": "webhookUrl does not match this webhook"})
		return
	}
	id := fmt.Sprintf("chatwh-%d", f.seq.Add(1))
	f.Record(providertest.Delivery{Content: *body.Content, Header: r.Header.Clone(), Body: raw, MessageID: id})
	jsonAnswer(w, http.StatusOK, map[string]any{"id": id, "received": true})
}
