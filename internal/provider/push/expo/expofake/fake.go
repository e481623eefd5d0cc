// Package expofake is Expo's wire fake: a local server that speaks its
// protocol, for the shared provider suite, end-to-end tests and the delivery
// benchmark. The herald binary never imports it (cmd/herald's
// TestBinaryHasNoTestCode checks).
package expofake

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/providertest"
	"github.com/herald-notify/herald/internal/provider/push"
	"github.com/herald-notify/herald/internal/provider/push/expo"
)

// Fake is a local server speaking the Expo push API, with enhanced push
// security on (requests carry the access token).
type Fake struct {
	providertest.Base
	providertest.Server
	seq atomic.Int64
}

const (
	fakeToken  = "expo-access-token-9f8e7d6c5b4a"
	fakePrefix = "/expo-proxy"
	// maxMessages is the most messages Expo takes in one request.
	maxMessages = 100
)

// New starts one on loopback.
func New() *Fake {
	f := &Fake{}
	f.Serve(f.serve)
	return f
}

// URL is the origin to set as credentials.baseUrl (with a path prefix).
func (f *Fake) URL() string { return f.Srv.URL + fakePrefix }

// Credentials are valid credentials pointing the provider at the fake.
func (f *Fake) Credentials() provider.Credentials {
	return provider.Credentials{"apiKey": fakeToken, "baseUrl": f.URL()}
}

// BadCredentials are credentials the fake refuses as the provider does.
func (f *Fake) BadCredentials() provider.Credentials {
	c := f.Credentials()
	c["apiKey"] = "expo-revoked-token-0000000"
	return c
}

// Token is an Expo push token.
func Token(n int) string { return fmt.Sprintf("ExponentPushToken[hrld%018d]", n) }

// Address gives the message a device token the fake accepts.
func (f *Fake) Address(m *provider.Message) { m.Tokens = []string{Token(int(f.seq.Load()))} }

// Traits say which parts of the shared suite apply.
func (f *Fake) Traits() providertest.Traits {
	return providertest.Traits{Overrides: true, Origin: true}
}

func requestError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"errors": []map[string]any{{"code": code, "message": msg}}})
}

// message is one push message; to is a token or a list of them.
type message struct {
	To    json.RawMessage `json:"to"`
	Title string          `json:"title"`
	Body  string          `json:"body"`
	Data  map[string]any  `json:"data"`
}

func (m message) recipients() []string {
	var one string
	if json.Unmarshal(m.To, &one) == nil {
		return []string{one}
	}
	var many []string
	_ = json.Unmarshal(m.To, &many)
	return many
}

func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	failure := f.Next()
	if r.Method != http.MethodPost || r.URL.Path != fakePrefix+"/--/api/v2/push/send" {
		requestError(w, 404, "NOT_FOUND", "Not found")
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+fakeToken {
		requestError(w, 401, "UNAUTHORIZED", "The bearer token is invalid; either revoke the token or create a new one.")
		return
	}
	switch failure {
	case providertest.Unavailable:
		requestError(w, 503, "INTERNAL_SERVER_ERROR", "An unknown error occurred.")
		return
	case providertest.RateLimited:
		requestError(w, 429, "TOO_MANY_REQUESTS", "You are sending too many notifications at once; limit is 600 per second.")
		return
	case providertest.Hang:
		providertest.HangUntilGone(r)
		return
	}
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		requestError(w, 400, "VALIDATION_ERROR", `"value" must be an object or array`)
		return
	}
	raw, _ := io.ReadAll(r.Body)
	var msgs []message
	single := len(raw) > 0 && raw[0] == '{'
	if single {
		var m message
		if json.Unmarshal(raw, &m) != nil {
			requestError(w, 400, "VALIDATION_ERROR", `"value" must be an object or array`)
			return
		}
		msgs = []message{m}
	} else if json.Unmarshal(raw, &msgs) != nil {
		requestError(w, 400, "VALIDATION_ERROR", `"value" must be an object or array`)
		return
	}
	if len(msgs) > maxMessages {
		requestError(w, 400, "PUSH_TOO_MANY_NOTIFICATIONS", "You are trying to send more than 100 push notifications in one request.")
		return
	}
	var tickets []map[string]any
	for _, m := range msgs {
		to := m.recipients()
		if len(to) == 0 {
			requestError(w, 400, "VALIDATION_ERROR", `"to" is required`)
			return
		}
		for _, token := range to {
			tickets = append(tickets, f.ticket(r, raw, m, token, failure))
		}
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	if single && len(tickets) == 1 {
		_ = json.NewEncoder(w).Encode(map[string]any{"data": tickets[0]})
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"data": tickets})
}

// ticket answers one recipient of a message, recording the accepted ones.
func (f *Fake) ticket(r *http.Request, raw []byte, m message, token string, failure providertest.Failure) map[string]any {
	fail := func(code, msg string) map[string]any {
		return map[string]any{"status": "error", "message": msg,
			"details": map[string]any{"error": code, "expoPushToken": token}}
	}
	switch {
	case !expo.IsPushToken(token):
		return fail("DeviceNotRegistered", fmt.Sprintf("%q is not a valid Expo push token", token))
	case failure == providertest.InvalidToken:
		return fail("DeviceNotRegistered", fmt.Sprintf("%q is not a registered push notification recipient", token))
	case failure == providertest.Rejected:
		return fail("MessageTooBig", "Message too big: the total payload must be at most 4096 bytes")
	}
	n := f.seq.Add(1)
	id := push.UUID("expo-fake", f.Srv.URL, fmt.Sprint(n))
	f.Record(providertest.Delivery{Tokens: []string{token}, Subject: m.Title, Content: m.Body, Data: m.Data,
		Header: r.Header.Clone(), Body: raw, MessageID: id})
	return map[string]any{"status": "ok", "id": id}
}
