// Package sendgridfake is SendGrid's wire fake: a local server that speaks its
// protocol, for the shared provider suite, end-to-end tests and the delivery
// benchmark. The herald binary never imports it (cmd/herald's
// TestBinaryHasNoTestCode checks).
package sendgridfake

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/providertest"
)

// Fake is a local server speaking SendGrid's Mail Send API.
type Fake struct {
	providertest.Base
	providertest.Server
	seq atomic.Int64
}

const (
	fakeKey    = "SG.fake-api-key-0123456789"
	fakePrefix = "/sendgrid-proxy"
)

// New starts one on loopback.
func New() *Fake {
	f := &Fake{}
	f.Serve(f.serve)
	return f
}

// URL is the origin to set as credentials.baseUrl (with a path prefix).
func (f *Fake) URL() string { return f.Srv.URL + fakePrefix }

func (f *Fake) Credentials() provider.Credentials {
	return provider.Credentials{"apiKey": fakeKey, "from": "noreply@herald.test", "senderName": "Herald Test",
		"baseUrl": f.URL()}
}

func (f *Fake) BadCredentials() provider.Credentials {
	c := f.Credentials()
	c["apiKey"] = "SG.wrong-key-9876543210"
	return c
}

func (f *Fake) Address(*provider.Message) {}

func (f *Fake) Traits() providertest.Traits {
	return providertest.Traits{RetryAfter: true, Overrides: true, Origin: true}
}

func sgError(w http.ResponseWriter, status int, msg, field string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"errors": []map[string]any{{"message": msg, "field": field, "help": nil}}})
}

func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	failure := f.Next()
	if r.Method != http.MethodPost || r.URL.Path != fakePrefix+"/v3/mail/send" {
		sgError(w, http.StatusNotFound, "not found", "")
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+fakeKey {
		sgError(w, http.StatusUnauthorized, "The provided authorization grant is invalid, expired, or revoked", "")
		return
	}
	if providertest.Answered(w, r, failure, providertest.Answers{
		providertest.Rejected: func(w http.ResponseWriter) {
			sgError(w, http.StatusBadRequest, "Does not contain a valid address.", "personalizations.0.to.0.email")
		},
		providertest.Unavailable: func(w http.ResponseWriter) { sgError(w, http.StatusServiceUnavailable, "Service Unavailable", "") },
		providertest.RateLimited: func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", "7")
			sgError(w, http.StatusTooManyRequests, "Too many requests", "")
		},
	}) {
		return
	}
	raw, _ := io.ReadAll(r.Body)
	var body struct {
		Personalizations []struct {
			To  []struct{ Email string } `json:"to"`
			Cc  []struct{ Email string } `json:"cc"`
			Bcc []struct{ Email string } `json:"bcc"`
		} `json:"personalizations"`
		From    struct{ Email, Name string }   `json:"from"`
		ReplyTo *struct{ Email string }        `json:"reply_to"`
		Subject string                         `json:"subject"`
		Content []struct{ Type, Value string } `json:"content"`
	}
	if err := json.Unmarshal(raw, &body); err != nil || len(body.Personalizations) == 0 || len(body.Personalizations[0].To) == 0 ||
		body.From.Email == "" || body.Subject == "" || len(body.Content) == 0 {
		sgError(w, http.StatusBadRequest, "The request body is invalid.", "")
		return
	}
	emails := func(l []struct{ Email string }) []string {
		var out []string
		for _, a := range l {
			out = append(out, a.Email)
		}
		return out
	}
	p := body.Personalizations[0]
	d := providertest.Delivery{To: emails(p.To), Cc: emails(p.Cc), Bcc: emails(p.Bcc), From: body.From.Email,
		SenderName: body.From.Name, Subject: body.Subject, Header: r.Header.Clone(), Query: r.URL.Query(), Body: raw,
		MessageID: fmt.Sprintf("sg-%d", f.seq.Add(1))}
	if body.ReplyTo != nil {
		d.ReplyTo = body.ReplyTo.Email
	}
	for _, c := range body.Content {
		switch strings.ToLower(c.Type) {
		case "text/plain":
			d.Text = c.Value
		case "text/html":
			d.HTML = c.Value
		}
	}
	f.Record(d)
	w.Header().Set("X-Message-Id", d.MessageID)
	w.WriteHeader(http.StatusAccepted)
}
