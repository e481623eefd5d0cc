// Package twiliofake is Twilio's wire fake: a local server that speaks its
// protocol, for the shared provider suite, end-to-end tests and the delivery
// benchmark. The herald binary never imports it (cmd/herald's
// TestBinaryHasNoTestCode checks).
package twiliofake

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/providertest"
	"github.com/herald-notify/herald/internal/provider/sms"
)

// Fake is a local server speaking Twilio's Messages API.
type Fake struct {
	providertest.Base
	providertest.Server
	seq atomic.Int64
}

const (
	fakeSID    = "AC0123456789abcdef0123456789abcdef"
	fakeToken  = "twilio-fake-auth-token-42"
	fakePrefix = "/twilio-proxy"
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
	return provider.Credentials{"accountSid": fakeSID, "token": fakeToken, "from": "+15555550199", "baseUrl": f.URL()}
}

// BadCredentials carry a wrong auth token (401, code 20003).
func (f *Fake) BadCredentials() provider.Credentials {
	c := f.Credentials()
	c["token"] = "wrong-twilio-token-99"
	return c
}

// Address keeps the message's phone number.
func (f *Fake) Address(*provider.Message) {}

// Traits: a Retry-After on 429, no JSON body, no idempotency key.
func (f *Fake) Traits() providertest.Traits {
	return providertest.Traits{RetryAfter: true, Origin: true}
}

func twilioError(w http.ResponseWriter, status, code int, msg string) {
	sms.JSONAnswer(w, status, map[string]any{"code": code, "message": msg,
		"more_info": fmt.Sprintf("https://www.twilio.com/docs/errors/%d", code), "status": status})
}

func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	failure := f.Next()
	if r.Method != http.MethodPost || r.URL.Path != fakePrefix+"/2010-04-01/Accounts/"+fakeSID+"/Messages.json" {
		twilioError(w, http.StatusNotFound, 20404, "The requested resource was not found")
		return
	}
	if user, pass, ok := r.BasicAuth(); !ok || user != fakeSID || pass != fakeToken {
		twilioError(w, http.StatusUnauthorized, 20003, "Authenticate")
		return
	}
	if providertest.Answered(w, r, failure, providertest.Answers{
		providertest.Rejected: func(w http.ResponseWriter) {
			twilioError(w, http.StatusBadRequest, 21211, "The 'To' number is not a valid phone number.")
		},
		providertest.Unavailable: func(w http.ResponseWriter) {
			twilioError(w, http.StatusServiceUnavailable, 20500, "Service unavailable")
		},
		providertest.RateLimited: func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", "7")
			twilioError(w, http.StatusTooManyRequests, 20429, "Too Many Requests")
		},
	}) {
		return
	}
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") || r.ParseForm() != nil {
		twilioError(w, http.StatusBadRequest, 21601, "Invalid request body")
		return
	}
	to, body := r.PostForm.Get("To"), r.PostForm.Get("Body")
	from := r.PostForm.Get("From")
	if from == "" {
		from = r.PostForm.Get("MessagingServiceSid")
	}
	switch {
	case !strings.HasPrefix(to, "+") || len(to) < 8:
		twilioError(w, http.StatusBadRequest, 21211, "The 'To' number "+to+" is not a valid phone number.")
		return
	case from == "":
		twilioError(w, http.StatusBadRequest, 21603, "A 'From' phone number is required.")
		return
	case body == "":
		twilioError(w, http.StatusBadRequest, 21602, "Message body is required.")
		return
	}
	sid := fmt.Sprintf("SM%032x", f.seq.Add(1))
	f.Record(providertest.Delivery{To: []string{to}, From: from, Content: body, Header: r.Header.Clone(),
		Body: []byte(r.PostForm.Encode()), MessageID: sid})
	sms.JSONAnswer(w, http.StatusCreated, map[string]any{"sid": sid, "account_sid": fakeSID, "to": to, "from": from,
		"body": body, "status": "queued", "num_segments": "1", "direction": "outbound-api", "error_code": nil})
}
