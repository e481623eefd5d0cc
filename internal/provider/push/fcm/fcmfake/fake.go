// Package fcmfake is FCM's wire fake: a local server that speaks its protocol,
// for the shared provider suite, end-to-end tests and the delivery benchmark.
// The herald binary never imports it (cmd/herald's TestBinaryHasNoTestCode
// checks).
package fcmfake

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/providertest"
	"github.com/herald-notify/herald/internal/provider/push/fcm"
)

// Fake is a local server speaking Google's OAuth token endpoint and FCM's
// HTTP v1 send API. Requests counts the send calls; token exchanges are
// counted apart (TokenRequests).
type Fake struct {
	providertest.Base
	providertest.Server
	seq atomic.Int64

	mu        sync.Mutex
	now       func() time.Time
	issued    map[string]time.Time // access token → expiry
	exchanges int
}

const (
	fakeProject = "herald-fake-project"
	fakeEmail   = "herald-sender@herald-fake-project.iam.gserviceaccount.com"
	fakeKeyID   = "0f3c9a7d2b1e4c5a8f6d0e9b7a3c2d1e4f5a6b7c"
	fakePrefix  = "/fcm-proxy"
	tokenPath   = "/token"
	// TokenLifetime is how long the access tokens the fake issues last.
	TokenLifetime = 3599 * time.Second
)

// The fake's service-account keys, generated once per process (RSA key
// generation is slow, and fakes are many).
var (
	goodKey = sync.OnceValue(func() *rsa.PrivateKey { return mustKey() })
	badKey  = sync.OnceValue(func() *rsa.PrivateKey { return mustKey() })
)

func mustKey() *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	return k
}

// fcmToken is the shape of an FCM registration token.
var fcmToken = regexp.MustCompile(`^[A-Za-z0-9_:\-]{32,1000}$`)

// New starts one on loopback.
func New() *Fake {
	f := &Fake{now: time.Now, issued: map[string]time.Time{}}
	f.Serve(f.serve)
	return f
}

// URL is the origin to set as credentials.baseUrl (with a path prefix).
func (f *Fake) URL() string { return f.Srv.URL + fakePrefix }

// SetClock sets the clock the fake checks JWTs and access tokens against.
func (f *Fake) SetClock(now func() time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = now
}

// TokenRequests counts the token exchanges the fake saw.
func (f *Fake) TokenRequests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.exchanges
}

// RevokeTokens forgets every access token issued so far, as Google does
// when a key is disabled: sends with them are answered 401.
func (f *Fake) RevokeTokens() {
	f.mu.Lock()
	defer f.mu.Unlock()
	clear(f.issued)
}

func (f *Fake) clock() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now()
}

func (f *Fake) account(key *rsa.PrivateKey) string {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		panic(err)
	}
	b, _ := json.Marshal(map[string]string{
		"type": "service_account", "project_id": fakeProject, "private_key_id": fakeKeyID,
		"private_key":  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email": fakeEmail, "client_id": "104729461803917263546",
		"token_uri": f.Srv.URL + tokenPath, "auth_uri": "https://accounts.google.com/o/oauth2/auth",
	})
	return string(b)
}

// Credentials are valid credentials pointing the provider at the fake.
func (f *Fake) Credentials() provider.Credentials {
	return provider.Credentials{"serviceAccount": f.account(goodKey()), "baseUrl": f.URL()}
}

// BadCredentials are the same account with another key: the token
// endpoint refuses the JWT's signature.
func (f *Fake) BadCredentials() provider.Credentials {
	return provider.Credentials{"serviceAccount": f.account(badKey()), "baseUrl": f.URL()}
}

// Token is a registration token of the shape FCM issues.
func Token(n int) string {
	return fmt.Sprintf("eHrld%06d_fake:APA91bH%s", n, strings.Repeat("Zx9-", 30))
}

// Address gives the message a device token the fake accepts.
func (f *Fake) Address(m *provider.Message) { m.Tokens = []string{Token(int(f.seq.Load()))} }

// Traits say which parts of the shared suite apply.
func (f *Fake) Traits() providertest.Traits {
	return providertest.Traits{RetryAfter: true, Overrides: true, Origin: true}
}

func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost && r.URL.Path == tokenPath {
		f.serveToken(w, r)
		return
	}
	f.serveSend(w, r)
}

func oauthError(w http.ResponseWriter, status int, code, desc string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": desc})
}

// serveToken is Google's token endpoint for the JWT bearer grant.
func (f *Fake) serveToken(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.exchanges++
	f.mu.Unlock()
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") || r.ParseForm() != nil {
		oauthError(w, 400, "invalid_request", "Bad Request")
		return
	}
	if r.PostForm.Get("grant_type") != fcm.GrantType {
		oauthError(w, 400, "unsupported_grant_type", "Invalid grant_type: "+r.PostForm.Get("grant_type"))
		return
	}
	now := f.clock()
	var claims struct {
		jwt.RegisteredClaims
		Scope string `json:"scope"`
	}
	tok, err := jwt.ParseWithClaims(r.PostForm.Get("assertion"), &claims, func(t *jwt.Token) (any, error) {
		return &goodKey().PublicKey, nil
	}, jwt.WithValidMethods([]string{"RS256"}), jwt.WithTimeFunc(func() time.Time { return now }),
		jwt.WithLeeway(time.Minute), jwt.WithIssuedAt(), jwt.WithExpirationRequired(),
		jwt.WithIssuer(fakeEmail), jwt.WithAudience(f.Srv.URL+tokenPath))
	switch {
	case err != nil && strings.Contains(err.Error(), "signature"):
		oauthError(w, 400, "invalid_grant", "Invalid JWT Signature.")
		return
	case err != nil || claims.IssuedAt == nil || claims.ExpiresAt.Sub(claims.IssuedAt.Time) > time.Hour:
		oauthError(w, 400, "invalid_grant", "Invalid JWT: Token must be a short-lived token (60 minutes) and in a "+
			"reasonable timeframe. Check your iat and exp values in the JWT claim.")
		return
	case tok.Header["kid"] != fakeKeyID:
		oauthError(w, 400, "invalid_grant", "Invalid JWT Signature.")
		return
	case claims.Scope != fcm.Scope:
		oauthError(w, 400, "invalid_scope", "Invalid OAuth scope or ID token audience provided.")
		return
	}
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	access := "ya29.c.fake-" + hex.EncodeToString(b)
	f.mu.Lock()
	f.issued[access] = now.Add(TokenLifetime)
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": access, "expires_in": int(TokenLifetime.Seconds()),
		"token_type": "Bearer"})
}

// fcmError writes FCM's error shape; errorCode "" leaves out the FcmError detail.
func fcmError(w http.ResponseWriter, status int, state, msg, errorCode string, extra ...map[string]any) {
	var details []map[string]any
	if errorCode != "" {
		details = append(details, map[string]any{"@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError",
			"errorCode": errorCode})
	}
	details = append(details, extra...)
	e := map[string]any{"code": status, "message": msg, "status": state}
	if len(details) > 0 {
		e["details"] = details
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": e})
}

func (f *Fake) authorized(r *http.Request) bool {
	access, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return false
	}
	now := f.clock()
	f.mu.Lock()
	defer f.mu.Unlock()
	exp, ok := f.issued[access]
	return ok && now.Before(exp)
}

// serveSend is projects.messages.send.
func (f *Fake) serveSend(w http.ResponseWriter, r *http.Request) {
	failure := f.Next()
	project, ok := strings.CutPrefix(r.URL.Path, fakePrefix+"/v1/projects/")
	project, ok2 := strings.CutSuffix(project, "/messages:send")
	if r.Method != http.MethodPost || !ok || !ok2 {
		fcmError(w, 404, "NOT_FOUND", "The requested URL was not found on this server.", "")
		return
	}
	if !f.authorized(r) {
		fcmError(w, 401, "UNAUTHENTICATED", "Request had invalid authentication credentials. Expected OAuth 2 access "+
			"token, login cookie or other valid authentication credential.", "")
		return
	}
	if project != fakeProject {
		fcmError(w, 403, "PERMISSION_DENIED", "Permission 'cloudmessaging.messages.create' denied on resource "+
			"'//cloudresourcemanager.googleapis.com/projects/"+project+"' (or it may not exist).", "")
		return
	}
	switch failure {
	case providertest.Rejected:
		fcmError(w, 400, "INVALID_ARGUMENT", "Request contains an invalid argument.", "INVALID_ARGUMENT")
		return
	case providertest.Unavailable:
		fcmError(w, 503, "UNAVAILABLE", "The service is currently unavailable.", "UNAVAILABLE")
		return
	case providertest.RateLimited:
		w.Header().Set("Retry-After", "7")
		fcmError(w, 429, "RESOURCE_EXHAUSTED", "Quota exceeded for quota metric 'Send requests'.", "QUOTA_EXCEEDED")
		return
	case providertest.InvalidToken:
		fcmError(w, 404, "NOT_FOUND", "Requested entity was not found.", "UNREGISTERED")
		return
	case providertest.Hang:
		providertest.HangUntilGone(r)
		return
	}
	raw, _ := io.ReadAll(r.Body)
	var body struct {
		Message *struct {
			Token        string `json:"token"`
			Notification struct {
				Title string `json:"title"`
				Body  string `json:"body"`
			} `json:"notification"`
			Data map[string]any `json:"data"`
		} `json:"message"`
	}
	if err := json.Unmarshal(raw, &body); err != nil || body.Message == nil {
		fcmError(w, 400, "INVALID_ARGUMENT", "Invalid JSON payload received.", "")
		return
	}
	msg := body.Message
	if !fcmToken.MatchString(msg.Token) {
		fcmError(w, 400, "INVALID_ARGUMENT", "The registration token is not a valid FCM registration token",
			"INVALID_ARGUMENT", map[string]any{"@type": "type.googleapis.com/google.rpc.BadRequest",
				"fieldViolations": []map[string]string{{"field": "message.token", "description": "Invalid registration token"}}})
		return
	}
	for k, v := range msg.Data {
		if _, ok := v.(string); !ok {
			fcmError(w, 400, "INVALID_ARGUMENT", fmt.Sprintf("Invalid value at 'message.data[%s].value' (TYPE_STRING)", k), "")
			return
		}
	}
	n := f.seq.Add(1)
	d := providertest.Delivery{Tokens: []string{msg.Token}, Subject: msg.Notification.Title,
		Content: msg.Notification.Body, Data: msg.Data, Header: r.Header.Clone(), Body: raw,
		MessageID: fmt.Sprintf("projects/%s/messages/0:%d%%%016x", fakeProject, 1700000000000000+n, n*7919)}
	f.Record(d)
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	_ = json.NewEncoder(w).Encode(map[string]string{"name": d.MessageID})
}
