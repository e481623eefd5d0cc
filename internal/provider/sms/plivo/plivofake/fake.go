// Package plivofake is Plivo's wire fake: a local server that speaks its
// protocol, for the shared provider suite, end-to-end tests and the delivery
// benchmark. The herald binary never imports it (cmd/herald's
// TestBinaryHasNoTestCode checks).
package plivofake

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

// Fake is a local server speaking Plivo's Message API.
type Fake struct {
	providertest.Base
	providertest.Server
	seq atomic.Int64
}

const (
	fakeID     = "MAFAKEAUTHID0123456789"
	fakeToken  = "plivo-fake-auth-token-42"
	fakePrefix = "/plivo-proxy"
)

// New starts one on loopback.
func New() *Fake {
	f := &Fake{}
	f.Serve(f.serve)
	return f
}

// URL is the origin to set as credentials.baseUrl.
func (f *Fake) URL() string { return f.Srv.URL + fakePrefix }

// Credentials point the provider at the fake.
func (f *Fake) Credentials() provider.Credentials {
	return provider.Credentials{"accountSid": fakeID, "token": fakeToken, "from": "+15555550177", "baseUrl": f.URL()}
}

// BadCredentials carry a wrong auth token (401).
func (f *Fake) BadCredentials() provider.Credentials {
	c := f.Credentials()
	c["token"] = "wrong-plivo-token-99"
	return c
}

// Address keeps the message's phone number.
func (f *Fake) Address(*provider.Message) {}

// Traits: a JSON body and Retry-After on 429.
func (f *Fake) Traits() providertest.Traits {
	return providertest.Traits{RetryAfter: true, Overrides: true, Origin: true}
}

func plivoError(w http.ResponseWriter, status int, msg string) {
	sms.JSONAnswer(w, status, map[string]any{"api_id": "fake-api-id", "error": msg})
}

func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	failure := f.Next()
	if r.Method != http.MethodPost || r.URL.Path != fakePrefix+"/v1/Account/"+fakeID+"/Message/" {
		plivoError(w, http.StatusNotFound, "not found")
		return
	}
	if user, pass, ok := r.BasicAuth(); !ok || user != fakeID || pass != fakeToken {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, "Could not verify your access level for that URL.\nYou have to login with proper credentials")
		return
	}
	if providertest.Answered(w, r, failure, providertest.Answers{
		providertest.Rejected: func(w http.ResponseWriter) {
			plivoError(w, http.StatusBadRequest, "dst parameter: invalid destination number")
		},
		providertest.Unavailable: func(w http.ResponseWriter) { plivoError(w, http.StatusInternalServerError, "internal server error") },
		providertest.RateLimited: func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", "7")
			plivoError(w, http.StatusTooManyRequests, "too many requests")
		},
	}) {
		return
	}
	raw, _ := io.ReadAll(r.Body)
	var in struct{ Src, Dst, Text string }
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") || json.Unmarshal(raw, &in) != nil {
		plivoError(w, http.StatusBadRequest, "invalid json data")
		return
	}
	if in.Src == "" || in.Dst == "" || in.Text == "" {
		plivoError(w, http.StatusBadRequest, "src, dst and text are required")
		return
	}
	id := fmt.Sprintf("%08x-0000-4000-8000-%012x", f.seq.Add(1), 0xfade)
	f.Record(providertest.Delivery{To: []string{in.Dst}, From: in.Src, Content: in.Text, Header: r.Header.Clone(), Body: raw, MessageID: id})
	sms.JSONAnswer(w, http.StatusAccepted, map[string]any{"api_id": "fake-api-id", "message": "message(s) queued", "message_uuid": []string{id}})
}
