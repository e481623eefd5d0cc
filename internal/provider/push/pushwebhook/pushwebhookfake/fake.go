// Package pushwebhookfake is the push webhook provider's wire fake: a local
// server that speaks its protocol, for the shared provider suite, end-to-end
// tests and the delivery benchmark. The herald binary never imports it
// (cmd/herald's TestBinaryHasNoTestCode checks).
package pushwebhookfake

import (
	"crypto/hmac"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/providertest"
	"github.com/herald-notify/herald/internal/provider/push/pushwebhook"
)

// Fake is a local push webhook receiver that checks Novu's signature.
type Fake struct {
	providertest.Base
	providertest.Server
	seq atomic.Int64
}

const (
	fakeSecret = "pwh-hmac-secret-5d4c3b2a1908"
	fakePath   = "/push-webhook-proxy/hooks/herald"
)

// New starts one on loopback.
func New() *Fake {
	f := &Fake{}
	f.Serve(f.serve)
	return f
}

// URL is the webhook's URL.
func (f *Fake) URL() string { return f.Srv.URL + fakePath }

// Credentials are valid credentials pointing the provider at the fake.
func (f *Fake) Credentials() provider.Credentials {
	return provider.Credentials{"webhookUrl": f.URL(), "secretKey": fakeSecret}
}

// BadCredentials are credentials the fake refuses as the provider does.
func (f *Fake) BadCredentials() provider.Credentials {
	c := f.Credentials()
	c["secretKey"] = "pwh-wrong-secret-000000"
	return c
}

// Address gives the message a device token.
func (f *Fake) Address(m *provider.Message) {
	m.Tokens = []string{fmt.Sprintf("device-token-%d", f.seq.Load())}
}

// Traits say which parts of the shared suite apply.
func (f *Fake) Traits() providertest.Traits {
	return providertest.Traits{RetryAfter: true, Overrides: true}
}

func reply(w http.ResponseWriter, status int, body map[string]any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	failure := f.Next()
	if r.Method != http.MethodPost || r.URL.Path != fakePath {
		reply(w, 404, map[string]any{"message": "not found"})
		return
	}
	raw, _ := io.ReadAll(r.Body)
	if !hmac.Equal([]byte(r.Header.Get(pushwebhook.SignatureHeader)), []byte(pushwebhook.Sign(fakeSecret, raw))) {
		reply(w, 401, map[string]any{"message": "invalid signature"})
		return
	}
	switch failure {
	case providertest.Rejected:
		reply(w, 422, map[string]any{"message": "notification refused"})
		return
	case providertest.Unavailable:
		reply(w, 503, map[string]any{"message": "temporarily unavailable"})
		return
	case providertest.RateLimited:
		w.Header().Set("Retry-After", "7")
		reply(w, 429, map[string]any{"message": "slow down"})
		return
	case providertest.InvalidToken:
		// The webhook protocol has no notion of an invalid token: a plain refusal.
		reply(w, 410, map[string]any{"message": "unknown device"})
		return
	case providertest.Hang:
		providertest.HangUntilGone(r)
		return
	}
	var body struct {
		Target    []string       `json:"target"`
		Title     *string        `json:"title"`
		Content   *string        `json:"content"`
		Payload   map[string]any `json:"payload"`
		Overrides map[string]any `json:"overrides"`
		Data      map[string]any `json:"data"`
	}
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") || json.Unmarshal(raw, &body) != nil ||
		len(body.Target) == 0 || body.Title == nil || body.Content == nil || body.Payload == nil || body.Overrides == nil {
		reply(w, 400, map[string]any{"message": "expected {target, title, content, payload, overrides}"})
		return
	}
	d := providertest.Delivery{Tokens: body.Target, Subject: *body.Title, Content: *body.Content, Data: body.Data,
		Header: r.Header.Clone(), Body: raw, MessageID: fmt.Sprintf("pwh-%d", f.seq.Add(1))}
	f.Record(d)
	reply(w, 200, map[string]any{"id": d.MessageID})
}
