// Package onesignalfake is OneSignal's wire fake: a local server that speaks
// its protocol, for the shared provider suite, end-to-end tests and the
// delivery benchmark. The herald binary never imports it (cmd/herald's
// TestBinaryHasNoTestCode checks).
package onesignalfake

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/providertest"
	"github.com/herald-notify/herald/internal/provider/push"
)

// Fake is a local server speaking OneSignal's Create message API, both the
// current dialect (/notifications, Key) and the legacy one (/api/v1, Basic).
// Every subscription id is subscribed unless Unsubscribe says otherwise;
// a repeated idempotency_key replays the first answer without a delivery.
type Fake struct {
	providertest.Base
	providertest.Server
	seq atomic.Int64

	mu           sync.Mutex
	unsubscribed map[string]bool
	answers      map[string][]byte // idempotency_key → first answer
}

const (
	fakeAppID  = "5eb5a37e-b458-11e3-ac11-000c2940e62c"
	fakeKey    = "os_v2_app_heraldfakekey7q2w3e4r5t6y7u8i9o0p"
	fakePrefix = "/onesignal-proxy"
)

// New starts one on loopback.
func New() *Fake {
	f := &Fake{unsubscribed: map[string]bool{}, answers: map[string][]byte{}}
	f.Serve(f.serve)
	return f
}

// URL is the origin to set as credentials.baseUrl (with a path prefix).
func (f *Fake) URL() string { return f.Srv.URL + fakePrefix }

// Credentials are valid credentials pointing the provider at the fake.
func (f *Fake) Credentials() provider.Credentials {
	return provider.Credentials{"applicationId": fakeAppID, "apiKey": fakeKey, "baseUrl": f.URL()}
}

// LegacyCredentials point at the legacy dialect (/api/v1, Basic).
func (f *Fake) LegacyCredentials() provider.Credentials {
	c := f.Credentials()
	c["baseUrl"] = f.URL() + "/api/v1"
	return c
}

// BadCredentials are credentials the fake refuses as the provider does.
func (f *Fake) BadCredentials() provider.Credentials {
	c := f.Credentials()
	c["apiKey"] = "os_v2_app_revokedkey000000000000000000"
	return c
}

// Token is a subscription id.
func Token(n int) string { return push.UUID("onesignal-subscription", fmt.Sprint(n)) }

// Unsubscribe marks subscription ids as unsubscribed from push.
func (f *Fake) Unsubscribe(ids ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, id := range ids {
		f.unsubscribed[id] = true
	}
}

// Address gives the message a device token the fake accepts.
func (f *Fake) Address(m *provider.Message) { m.Tokens = []string{Token(int(f.seq.Load()))} }

// Traits: the idempotency key goes on the wire as a UUID derived from the
// message's key (see IdempotencyKey), so the suite's equality check does
// not apply; the package's tests check it.
func (f *Fake) Traits() providertest.Traits {
	return providertest.Traits{RetryAfter: true, Overrides: true, Origin: true}
}

func answer(w http.ResponseWriter, status int, body any) []byte {
	b, _ := json.Marshal(body)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b)
	return b
}

func errorsOf(msgs ...string) map[string]any { return map[string]any{"errors": msgs} }

func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	failure := f.Next()
	var legacy bool
	switch r.URL.Path {
	case fakePrefix + "/notifications":
	case fakePrefix + "/api/v1/notifications":
		legacy = true
	default:
		answer(w, 404, errorsOf("Not Found"))
		return
	}
	scheme, target := "Key ", "include_subscription_ids"
	if legacy {
		scheme, target = "Basic ", "include_player_ids"
	}
	if r.Method != http.MethodPost {
		answer(w, 405, errorsOf("Method Not Allowed"))
		return
	}
	if r.Header.Get("Authorization") != scheme+fakeKey {
		answer(w, 403, errorsOf("Access denied.  Please include an 'Authorization: "+scheme+"<token>' header with a "+
			"valid API key (https://documentation.onesignal.com/docs/keys-and-ids)."))
		return
	}
	switch failure {
	case providertest.Rejected:
		answer(w, 400, errorsOf("Message Notifications must have English language content"))
		return
	case providertest.Unavailable:
		answer(w, 503, errorsOf("Service Unavailable"))
		return
	case providertest.RateLimited:
		w.Header().Set("Retry-After", "7")
		answer(w, 429, errorsOf("API rate limit exceeded"))
		return
	case providertest.Hang:
		providertest.HangUntilGone(r)
		return
	}
	raw, _ := io.ReadAll(r.Body)
	var body map[string]json.RawMessage
	var req struct {
		AppID          string            `json:"app_id"`
		Contents       map[string]string `json:"contents"`
		Headings       map[string]string `json:"headings"`
		Data           map[string]any    `json:"data"`
		IdempotencyKey string            `json:"idempotency_key"`
	}
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") || json.Unmarshal(raw, &body) != nil ||
		json.Unmarshal(raw, &req) != nil || req.AppID != fakeAppID {
		answer(w, 400, errorsOf("app_id not found. You may be missing a Content-Type: application/json header."))
		return
	}
	var ids []string
	if json.Unmarshal(body[target], &ids) != nil || len(ids) == 0 {
		answer(w, 400, errorsOf("You must include which players, segments, or tags you wish to send this notification to."))
		return
	}
	for _, id := range ids {
		if !push.IsUUID(id) {
			answer(w, 400, errorsOf(fmt.Sprintf("Incorrect %s format in %s (not a valid UUID): %s",
				strings.TrimSuffix(strings.TrimPrefix(target, "include_"), "s"), target, id)))
			return
		}
	}
	if req.Contents["en"] == "" {
		answer(w, 400, errorsOf("Message Notifications must have English language content"))
		return
	}
	if req.IdempotencyKey != "" && !push.IsUUID(req.IdempotencyKey) {
		answer(w, 400, errorsOf("idempotency_key must be a valid UUID"))
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if prev, ok := f.answers[req.IdempotencyKey]; ok && req.IdempotencyKey != "" {
		w.Header().Set("Idempotent-Replayed", "true")
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_, _ = w.Write(prev)
		return
	}
	var subscribed, invalid []string
	for _, id := range ids {
		if f.unsubscribed[id] || failure == providertest.InvalidToken {
			invalid = append(invalid, id)
		} else {
			subscribed = append(subscribed, id)
		}
	}
	var out []byte
	if len(subscribed) == 0 {
		out = answer(w, 200, map[string]any{"id": "", "errors": []string{"All included players are not subscribed"}})
	} else {
		n := f.seq.Add(1)
		d := providertest.Delivery{Tokens: subscribed, Subject: req.Headings["en"], Content: req.Contents["en"],
			Data: req.Data, IdempotencyKey: req.IdempotencyKey, Header: r.Header.Clone(), Body: raw,
			MessageID: push.UUID("onesignal-notification", f.Srv.URL, fmt.Sprint(n))}
		f.Record(d)
		resp := map[string]any{"id": d.MessageID, "external_id": nil}
		if req.IdempotencyKey != "" {
			resp["external_id"] = req.IdempotencyKey
		}
		if len(invalid) > 0 {
			resp["errors"] = map[string]any{"invalid_player_ids": invalid}
		}
		out = answer(w, 200, resp)
	}
	if req.IdempotencyKey != "" {
		f.answers[req.IdempotencyKey] = out
	}
}
