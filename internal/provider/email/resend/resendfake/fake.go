// Package resendfake is Resend's wire fake: a local server that speaks its
// protocol, for the shared provider suite, end-to-end tests and the delivery
// benchmark. The herald binary never imports it (cmd/herald's
// TestBinaryHasNoTestCode checks).
package resendfake

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/mail"
	"regexp"
	"strings"
	"sync"

	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/providertest"
)

// Fake is a local server speaking Resend's POST /emails, idempotency keys
// included: a key seen again with the same body answers the first id and
// sends nothing; with another body it is a 409.
type Fake struct {
	providertest.Base
	providertest.Server
	mu   sync.Mutex
	keys map[string]sent // idempotency key → what it sent
}

type sent struct {
	bodyHash [32]byte
	id       string
}

const (
	fakeKey    = "re_fake_0123456789abcdef"
	fakePrefix = "/resend-proxy"
)

var tagPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,256}$`)

// New starts one on loopback.
func New() *Fake {
	f := &Fake{keys: map[string]sent{}}
	f.Serve(f.serve)
	return f
}

// URL is the origin to set as credentials.baseUrl (with a path prefix).
func (f *Fake) URL() string { return f.Srv.URL + fakePrefix }

// Credentials point the provider at the fake.
func (f *Fake) Credentials() provider.Credentials {
	return provider.Credentials{"apiKey": fakeKey, "from": "noreply@herald.test", "senderName": "Herald Test",
		"baseUrl": f.URL()}
}

// BadCredentials carry an API key Resend does not know (403).
func (f *Fake) BadCredentials() provider.Credentials {
	c := f.Credentials()
	c["apiKey"] = "re_wrong_9876543210"
	return c
}

// Address keeps the message's recipients.
func (f *Fake) Address(*provider.Message) {}

// Traits: Resend sends retry-after, takes a JSON body and idempotency keys.
func (f *Fake) Traits() providertest.Traits {
	return providertest.Traits{RetryAfter: true, Overrides: true, Idempotency: true, Origin: true}
}

func reError(w http.ResponseWriter, status int, name, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"statusCode": status, "name": name, "message": msg})
}

// strings reads a field Resend takes as a string or an array of them.
func stringsOf(raw json.RawMessage) ([]string, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, true
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}, true
	}
	var list []string
	return list, json.Unmarshal(raw, &list) == nil
}

func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	failure := f.Next()
	if r.Method != http.MethodPost || r.URL.Path != fakePrefix+"/emails" {
		reError(w, http.StatusNotFound, "not_found", "The requested endpoint does not exist.")
		return
	}
	switch auth := r.Header.Get("Authorization"); {
	case strings.TrimSpace(strings.TrimPrefix(auth, "Bearer")) == "":
		reError(w, http.StatusUnauthorized, "missing_api_key", "Missing API key in the authorization header. Include the following header in the request: Authorization: Bearer YOUR_API_KEY")
		return
	case auth == "Bearer "+fakeKey:
	default:
		reError(w, http.StatusForbidden, "invalid_api_key", "API key is invalid")
		return
	}
	switch failure {
	case providertest.Rejected:
		reError(w, http.StatusUnprocessableEntity, "validation_error", "Invalid `to` field. The email address needs to follow the `email@example.com` or `Name <email@example.com>` format.")
		return
	case providertest.Unavailable:
		reError(w, http.StatusInternalServerError, "internal_server_error", "An unexpected error occurred.")
		return
	case providertest.RateLimited:
		w.Header().Set("Retry-After", "7")
		reError(w, http.StatusTooManyRequests, "rate_limit_exceeded", "Too many requests. You can only make 2 requests per second. See rate limit response headers for more information. Or contact support to increase rate limit.")
		return
	case providertest.Hang:
		providertest.HangUntilGone(r)
		return
	}
	raw, _ := io.ReadAll(r.Body)
	key := r.Header.Get("Idempotency-Key")
	if len(key) > 256 {
		reError(w, http.StatusBadRequest, "invalid_idempotency_key", "The key must be between 1-256 chars.")
		return
	}
	var body struct {
		From    string                         `json:"from"`
		To      json.RawMessage                `json:"to"`
		Cc      json.RawMessage                `json:"cc"`
		Bcc     json.RawMessage                `json:"bcc"`
		ReplyTo json.RawMessage                `json:"reply_to"`
		Subject string                         `json:"subject"`
		HTML    string                         `json:"html"`
		Text    string                         `json:"text"`
		Headers map[string]string              `json:"headers"`
		Tags    []struct{ Name, Value string } `json:"tags"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		reError(w, http.StatusBadRequest, "validation_error", "Invalid JSON body.")
		return
	}
	from, err := mail.ParseAddress(body.From)
	if err != nil {
		reError(w, http.StatusUnprocessableEntity, "validation_error", "Invalid `from` field. The email address needs to follow the `email@example.com` or `Name <email@example.com>` format.")
		return
	}
	to, ok1 := stringsOf(body.To)
	cc, ok2 := stringsOf(body.Cc)
	bcc, ok3 := stringsOf(body.Bcc)
	replyTo, ok4 := stringsOf(body.ReplyTo)
	if !ok1 || !ok2 || !ok3 || !ok4 || len(to) == 0 || len(to) > 50 {
		reError(w, http.StatusUnprocessableEntity, "validation_error", "Invalid `to` field.")
		return
	}
	for _, a := range append(append(append(append([]string{}, to...), cc...), bcc...), replyTo...) {
		if _, err := mail.ParseAddress(a); err != nil {
			reError(w, http.StatusUnprocessableEntity, "validation_error", "Invalid email address "+a+".")
			return
		}
	}
	if body.Subject == "" {
		reError(w, http.StatusUnprocessableEntity, "missing_required_field", "Missing `subject` field.")
		return
	}
	if body.HTML == "" && body.Text == "" {
		reError(w, http.StatusUnprocessableEntity, "validation_error", "Missing `html` or `text` field.")
		return
	}
	for _, t := range body.Tags {
		if !tagPattern.MatchString(t.Name) || !tagPattern.MatchString(t.Value) {
			reError(w, http.StatusUnprocessableEntity, "validation_error", "Tags should only contain ASCII letters (a–z, A–Z), numbers (0–9), underscores (_), or dashes (-).")
			return
		}
	}
	hash := sha256.Sum256(raw)
	f.mu.Lock()
	defer f.mu.Unlock()
	if key != "" {
		if prev, ok := f.keys[key]; ok {
			if prev.bodyHash != hash {
				reError(w, http.StatusConflict, "invalid_idempotent_request", "Same idempotency key used with a different request payload. Change your idempotency key or payload.")
				return
			}
			writeID(w, prev.id)
			return
		}
	}
	d := providertest.Delivery{To: to, Cc: cc, Bcc: bcc, From: from.Address, SenderName: from.Name,
		Subject: body.Subject, HTML: body.HTML, Text: body.Text, IdempotencyKey: key, Header: r.Header.Clone(),
		Body: raw, MessageID: uuid()}
	if len(replyTo) > 0 {
		d.ReplyTo = replyTo[0]
	}
	if key != "" {
		f.keys[key] = sent{bodyHash: hash, id: d.MessageID}
	}
	f.Record(d)
	writeID(w, d.MessageID)
}

func writeID(w http.ResponseWriter, id string) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"id": id})
}

// uuid is a random version 4 UUID, the form of Resend's email ids.
func uuid() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
