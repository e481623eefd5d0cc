// Package nexmofake is Vonage's (nexmo) wire fake: a local server that speaks
// its protocol, for the shared provider suite, end-to-end tests and the
// delivery benchmark. The herald binary never imports it (cmd/herald's
// TestBinaryHasNoTestCode checks).
package nexmofake

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

// Fake is a local server speaking Vonage's SMS API: failures come as HTTP
// 200 with a non-zero message status, as Vonage sends them.
type Fake struct {
	providertest.Base
	providertest.Server
	seq atomic.Int64
}

const (
	fakeKey    = "vonage-key"
	fakeSecret = "vonage-fake-secret-42"
	fakePrefix = "/nexmo-proxy"
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
	return provider.Credentials{"apiKey": fakeKey, "secretKey": fakeSecret, "from": "Herald", "baseUrl": f.URL()}
}

// BadCredentials carry a wrong secret (status 4).
func (f *Fake) BadCredentials() provider.Credentials {
	c := f.Credentials()
	c["secretKey"] = "wrong-vonage-secret-99"
	return c
}

// Address keeps the message's phone number.
func (f *Fake) Address(*provider.Message) {}

// Traits: a JSON body; throttling is a status in a 200, without Retry-After.
func (f *Fake) Traits() providertest.Traits {
	return providertest.Traits{Overrides: true, Origin: true}
}

func status(w http.ResponseWriter, to, code, text string) {
	sms.JSONAnswer(w, http.StatusOK, map[string]any{"message-count": "1",
		"messages": []map[string]any{{"to": to, "status": code, "error-text": text}}})
}

func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	failure := f.Next()
	if r.Method != http.MethodPost || r.URL.Path != fakePrefix+"/sms/json" {
		http.NotFound(w, r)
		return
	}
	if failure == providertest.Hang {
		providertest.HangUntilGone(r)
		return
	}
	if failure == providertest.Unavailable {
		http.Error(w, "Service Unavailable", http.StatusServiceUnavailable)
		return
	}
	raw, _ := io.ReadAll(r.Body)
	var in map[string]any
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") || json.Unmarshal(raw, &in) != nil {
		status(w, "", "3", "Invalid Message")
		return
	}
	str := func(k string) string { s, _ := in[k].(string); return s }
	to := str("to")
	switch {
	case str("api_key") == "" || str("api_secret") == "" || str("from") == "" || to == "" || str("text") == "":
		status(w, to, "2", "Missing Parameters")
		return
	case str("api_key") != fakeKey || str("api_secret") != fakeSecret:
		status(w, to, "4", "Bad Credentials")
		return
	case strings.HasPrefix(to, "+") || failure == providertest.Rejected:
		status(w, to, "3", "Invalid Message: to")
		return
	case failure == providertest.RateLimited:
		status(w, to, "1", "Throughput Rate Exceeded - please wait [ 1000 ] and retry")
		return
	}
	id := fmt.Sprintf("%032X", f.seq.Add(1))
	f.Record(providertest.Delivery{To: []string{"+" + to}, From: str("from"), Content: str("text"), Header: r.Header.Clone(),
		Body: raw, MessageID: id})
	sms.JSONAnswer(w, http.StatusOK, map[string]any{"message-count": "1", "messages": []map[string]any{{
		"to": to, "message-id": id, "status": "0", "remaining-balance": "3.14", "message-price": "0.03", "network": "12345"}}})
}
