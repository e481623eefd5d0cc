// Package sinchfake is Sinch's wire fake: a local server that speaks its
// protocol, for the shared provider suite, end-to-end tests and the delivery
// benchmark. The herald binary never imports it (cmd/herald's
// TestBinaryHasNoTestCode checks).
package sinchfake

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/providertest"
	"github.com/herald-notify/herald/internal/provider/sms"
)

// Fake is a local server speaking Sinch's SMS batches API.
type Fake struct {
	providertest.Base
	providertest.Server
	seq atomic.Int64
}

const (
	fakePlan   = "fakeplan0123456789"
	fakeToken  = "sinch-fake-api-token-42"
	fakePrefix = "/sinch-proxy"
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
	return provider.Credentials{"servicePlanId": fakePlan, "apiToken": fakeToken, "region": "eu", "from": "+15555550166",
		"baseUrl": f.URL()}
}

// BadCredentials carry a wrong token (401).
func (f *Fake) BadCredentials() provider.Credentials {
	c := f.Credentials()
	c["apiToken"] = "wrong-sinch-token-99"
	return c
}

// Address keeps the message's phone number.
func (f *Fake) Address(*provider.Message) {}

// Traits: a JSON body and Retry-After on 429.
func (f *Fake) Traits() providertest.Traits {
	return providertest.Traits{RetryAfter: true, Overrides: true, Origin: true}
}

func sinchError(w http.ResponseWriter, status int, code, text string) {
	sms.JSONAnswer(w, status, map[string]any{"code": code, "text": text})
}

func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	failure := f.Next()
	if r.Method != http.MethodPost || r.URL.Path != fakePrefix+"/xms/v1/"+fakePlan+"/batches" {
		sinchError(w, http.StatusNotFound, "not_found", "No such resource")
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+fakeToken {
		sinchError(w, http.StatusUnauthorized, "unauthorized", "Invalid credentials")
		return
	}
	if providertest.Answered(w, r, failure, providertest.Answers{
		providertest.Rejected: func(w http.ResponseWriter) {
			sinchError(w, http.StatusBadRequest, "syntax_invalid_parameter_format", "Invalid phone number format")
		},
		providertest.Unavailable: func(w http.ResponseWriter) {
			sinchError(w, http.StatusServiceUnavailable, "service_unavailable", "Service unavailable")
		},
		providertest.RateLimited: func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", "7")
			sinchError(w, http.StatusTooManyRequests, "too_many_requests", "Too many requests")
		},
	}) {
		return
	}
	raw, _ := io.ReadAll(r.Body)
	var in struct {
		From string   `json:"from"`
		To   []string `json:"to"`
		Body string   `json:"body"`
	}
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") || json.Unmarshal(raw, &in) != nil {
		sinchError(w, http.StatusBadRequest, "syntax_invalid_json", "Invalid JSON")
		return
	}
	if in.From == "" || len(in.To) == 0 || in.Body == "" {
		sinchError(w, http.StatusBadRequest, "syntax_constraint_violation", "from, to and body are required")
		return
	}
	id := fmt.Sprintf("01FAKE%020d", f.seq.Add(1))
	f.Record(providertest.Delivery{To: in.To, From: in.From, Content: in.Body, Header: r.Header.Clone(), Body: raw, MessageID: id})
	sms.JSONAnswer(w, http.StatusCreated, map[string]any{"id": id, "to": in.To, "from": in.From, "body": in.Body,
		"type": "mt_text", "canceled": false, "created_at": time.Now().UTC().Format(time.RFC3339Nano)})
}
