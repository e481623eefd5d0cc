// Package postmarkfake is Postmark's wire fake: a local server that speaks its
// protocol, for the shared provider suite, end-to-end tests and the delivery
// benchmark. The herald binary never imports it (cmd/herald's
// TestBinaryHasNoTestCode checks).
package postmarkfake

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/mail"
	"strings"
	"time"

	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/providertest"
)

// Fake is a local server speaking Postmark's POST /email.
type Fake struct {
	providertest.Base
	providertest.Server
}

const (
	fakeToken  = "pm-server-token-0123456789"
	fakePrefix = "/postmark-proxy"
)

// New starts one on loopback.
func New() *Fake {
	f := &Fake{}
	f.Serve(f.serve)
	return f
}

// URL is the origin to set as credentials.baseUrl (with a path prefix).
func (f *Fake) URL() string { return f.Srv.URL + fakePrefix }

// Credentials point the provider at the fake.
func (f *Fake) Credentials() provider.Credentials {
	return provider.Credentials{"apiKey": fakeToken, "from": "noreply@herald.test", "senderName": "Herald Test",
		"baseUrl": f.URL()}
}

// BadCredentials carry a server token Postmark does not know (401).
func (f *Fake) BadCredentials() provider.Credentials {
	c := f.Credentials()
	c["apiKey"] = "pm-wrong-token-9876543210"
	return c
}

// Address keeps the message's recipients.
func (f *Fake) Address(*provider.Message) {}

// Traits: a JSON body; Postmark sends no Retry-After and takes no idempotency key.
func (f *Fake) Traits() providertest.Traits {
	return providertest.Traits{Overrides: true, Origin: true}
}

func pmError(w http.ResponseWriter, status, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"ErrorCode": code, "Message": msg})
}

// list parses a comma-separated recipient field.
func list(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	as, err := mail.ParseAddressList(s)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.Address
	}
	return out, nil
}

func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	failure := f.Next()
	if r.Method != http.MethodPost || r.URL.Path != fakePrefix+"/email" {
		pmError(w, http.StatusNotFound, 0, "Entity not found.")
		return
	}
	switch tok := r.Header.Get("X-Postmark-Server-Token"); tok {
	case fakeToken:
	case "":
		pmError(w, http.StatusUnauthorized, 10, "No Account or Server API tokens were supplied in the HTTP headers. Please add a header for either X-Postmark-Server-Token or X-Postmark-Account-Token.")
		return
	default:
		pmError(w, http.StatusUnauthorized, 10, "The Server Token you provided in the X-Postmark-Server-Token request header was invalid. Please verify that you are using a valid token.")
		return
	}
	if !strings.Contains(r.Header.Get("Accept"), "application/json") || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		pmError(w, http.StatusUnprocessableEntity, 0, "Accept and Content-Type must be application/json.")
		return
	}
	switch failure {
	case providertest.Rejected:
		pmError(w, http.StatusUnprocessableEntity, 406, "You tried to send to recipient(s) that have been marked as inactive. Found inactive addresses: ada@example.com. Inactive recipients are ones that have generated a hard bounce, a spam complaint, or a manual suppression.")
		return
	case providertest.Unavailable:
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, "Service Unavailable")
		return
	case providertest.RateLimited:
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = io.WriteString(w, "Rate limit exceeded")
		return
	case providertest.Hang:
		providertest.HangUntilGone(r)
		return
	}
	raw, _ := io.ReadAll(r.Body)
	var body struct {
		From, To, Cc, Bcc, ReplyTo, Subject, TextBody, MessageStream string
		HTMLBody                                                     string `json:"HtmlBody"`
		Headers                                                      []struct{ Name, Value string }
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		pmError(w, http.StatusUnprocessableEntity, 402, "Received invalid JSON input.")
		return
	}
	from, err := mail.ParseAddress(body.From)
	if err != nil {
		pmError(w, http.StatusUnprocessableEntity, 300, "Invalid 'From' address: '"+body.From+"'.")
		return
	}
	to, err1 := list(body.To)
	cc, err2 := list(body.Cc)
	bcc, err3 := list(body.Bcc)
	if err1 != nil || err2 != nil || err3 != nil {
		pmError(w, http.StatusUnprocessableEntity, 300, "Error parsing 'To', 'Cc' or 'Bcc': illegal email address.")
		return
	}
	if len(to) == 0 {
		pmError(w, http.StatusUnprocessableEntity, 300, "Zero recipients specified")
		return
	}
	if len(to)+len(cc)+len(bcc) > 50 {
		pmError(w, http.StatusUnprocessableEntity, 300, "Too many recipients: at most 50 in To, Cc and Bcc together.")
		return
	}
	if body.HTMLBody == "" && body.TextBody == "" {
		pmError(w, http.StatusUnprocessableEntity, 300, "Provide either email TextBody or HtmlBody or both.")
		return
	}
	if body.MessageStream != "" && body.MessageStream != "outbound" {
		pmError(w, http.StatusUnprocessableEntity, 1235, "The message stream for the provided 'MessageStream' was not found.")
		return
	}
	d := providertest.Delivery{To: to, Cc: cc, Bcc: bcc, From: from.Address, SenderName: from.Name,
		Subject: body.Subject, HTML: body.HTMLBody, Text: body.TextBody, Header: r.Header.Clone(), Body: raw,
		MessageID: uuid()}
	if body.ReplyTo != "" {
		rt, err := list(body.ReplyTo)
		if err != nil || len(rt) == 0 {
			pmError(w, http.StatusUnprocessableEntity, 300, "Invalid 'ReplyTo' address.")
			return
		}
		d.ReplyTo = rt[0]
	}
	f.Record(d)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"To": body.To, "SubmittedAt": time.Now().Format("2006-01-02T15:04:05.0000000-07:00"),
		"MessageID": d.MessageID, "ErrorCode": 0, "Message": "OK"})
}

// uuid is a random version 4 UUID, the form of Postmark's MessageID.
func uuid() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
