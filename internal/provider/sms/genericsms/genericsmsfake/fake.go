// Package genericsmsfake is the generic SMS provider's wire fake: a local
// server that speaks its protocol, for the shared provider suite, end-to-end
// tests and the delivery benchmark. The herald binary never imports it
// (cmd/herald's TestBinaryHasNoTestCode checks).
package genericsmsfake

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/providertest"
	"github.com/herald-notify/herald/internal/provider/sms"
)

// Fake is a local SMS endpoint of the shape generic-sms integrations call:
// the key in a header, a JSON body, the id nested in the answer
// (data.message.uid) so that idPath is exercised. With token auth it also
// serves the auth URL and requires the token it issued.
type Fake struct {
	providertest.Base
	providertest.Server
	seq        atomic.Int64
	tokenAuth  bool
	tokensMade atomic.Int64
}

const (
	fakeKey    = "generic-fake-api-key-42"
	fakeSecret = "generic-fake-secret-42"
)

// New starts one on loopback (key headers only).
func New() *Fake { return newFake(false) }

// NewTokenAuth starts one that requires a token from its auth URL.
func NewTokenAuth() *Fake { return newFake(true) }

func newFake(tokenAuth bool) *Fake {
	f := &Fake{tokenAuth: tokenAuth}
	f.Serve(f.serve)
	return f
}

// Credentials point the provider at the fake.
func (f *Fake) Credentials() provider.Credentials {
	c := provider.Credentials{"baseUrl": f.Srv.URL + "/gateway/v2/sms/send", "apiKeyRequestHeader": "X-Api-Key",
		"apiKey": fakeKey, "secretKeyRequestHeader": "X-Api-Secret", "secretKey": fakeSecret, "from": "Herald",
		"idPath": "data.message.uid", "datePath": "data.message.at"}
	if f.tokenAuth {
		c["authenticateByToken"] = true
		c["domain"] = f.Srv.URL + "/auth/token"
		c["authenticationTokenKey"] = "X-Auth-Token"
	}
	return c
}

// BadCredentials carry a wrong key (401).
func (f *Fake) BadCredentials() provider.Credentials {
	c := f.Credentials()
	c["apiKey"] = "wrong-generic-key-99"
	return c
}

// TokensIssued counts the tokens the auth URL gave out.
func (f *Fake) TokensIssued() int { return int(f.tokensMade.Load()) }

// Address keeps the message's phone number.
func (f *Fake) Address(*provider.Message) {}

// Traits: a JSON body and Retry-After on 429.
func (f *Fake) Traits() providertest.Traits {
	return providertest.Traits{RetryAfter: true, Overrides: true}
}

func (f *Fake) keysOK(r *http.Request) bool {
	return r.Header.Get("X-Api-Key") == fakeKey && r.Header.Get("X-Api-Secret") == fakeSecret
}

func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost && r.URL.Path == "/auth/token" && f.tokenAuth {
		if !f.keysOK(r) {
			sms.JSONAnswer(w, http.StatusUnauthorized, map[string]any{"message": "invalid key"})
			return
		}
		n := f.tokensMade.Add(1)
		sms.JSONAnswer(w, http.StatusOK, map[string]any{"data": map[string]any{"X-Auth-Token": fmt.Sprintf("tok-%d", n)}})
		return
	}
	failure := f.Next()
	if r.Method != http.MethodPost || r.URL.Path != "/gateway/v2/sms/send" {
		sms.JSONAnswer(w, http.StatusNotFound, map[string]any{"message": "not found"})
		return
	}
	if !f.keysOK(r) {
		sms.JSONAnswer(w, http.StatusUnauthorized, map[string]any{"message": "invalid key"})
		return
	}
	if f.tokenAuth && !strings.HasPrefix(r.Header.Get("X-Auth-Token"), "tok-") {
		sms.JSONAnswer(w, http.StatusUnauthorized, map[string]any{"message": "token required"})
		return
	}
	if providertest.Answered(w, r, failure, providertest.Answers{
		providertest.Rejected: func(w http.ResponseWriter) {
			sms.JSONAnswer(w, http.StatusUnprocessableEntity, map[string]any{"message": "invalid destination number"})
		},
		providertest.Unavailable: func(w http.ResponseWriter) {
			sms.JSONAnswer(w, http.StatusBadGateway, map[string]any{"message": "upstream unavailable"})
		},
		providertest.RateLimited: func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", "7")
			sms.JSONAnswer(w, http.StatusTooManyRequests, map[string]any{"message": "slow down"})
		},
	}) {
		return
	}
	raw, _ := io.ReadAll(r.Body)
	var in struct {
		To, Content, Sender, From, ID string
	}
	if json.Unmarshal(raw, &in) != nil || in.To == "" || in.Content == "" || in.Sender == "" {
		sms.JSONAnswer(w, http.StatusBadRequest, map[string]any{"message": "to, content and sender are required"})
		return
	}
	id := fmt.Sprintf("gen-%d", f.seq.Add(1))
	f.Record(providertest.Delivery{To: []string{in.To}, From: in.Sender, Content: in.Content, Header: r.Header.Clone(),
		Body: raw, MessageID: id})
	sms.JSONAnswer(w, http.StatusOK, map[string]any{"data": map[string]any{"message": map[string]any{"uid": id, "at": "2026-11-23T10:00:00Z"}}})
}
