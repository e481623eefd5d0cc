// Package apnsfake is APNs' wire fake: a local server that speaks its protocol,
// for the shared provider suite, end-to-end tests and the delivery benchmark.
// The herald binary never imports it (cmd/herald's TestBinaryHasNoTestCode
// checks).
package apnsfake

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/providertest"
	"github.com/herald-notify/herald/internal/provider/push"
)

// Fake is a local HTTP/2 TLS server speaking APNs' provider API with
// token-based authentication.
type Fake struct {
	providertest.Base
	srv      *httptest.Server
	key, bad *ecdsa.PrivateKey
	seq      atomic.Int64

	mu      sync.Mutex
	now     func() time.Time
	bearers map[string]bool // provider tokens seen
}

const (
	fakeKeyID  = "HRLD8KEY01"
	fakeTeamID = "HRLDTEAM01"
	fakeTopic  = "com.herald.test"
	fakePrefix = "/apns-proxy"
	maxPayload = 4096
)

// deviceToken is the shape of an APNs device token (hexadecimal).
var deviceToken = regexp.MustCompile(`^[0-9a-fA-F]{64,200}$`)

// New starts one on loopback.
func New() *Fake {
	f := &Fake{key: mustKey(), bad: mustKey(), now: time.Now, bearers: map[string]bool{}}
	f.srv = httptest.NewUnstartedServer(http.HandlerFunc(f.serve))
	f.srv.EnableHTTP2 = true
	// Clients abandon spare connections they dialled while HTTP/2 was being
	// negotiated; their handshake errors at Close are noise.
	f.srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	f.srv.StartTLS()
	return f
}

func mustKey() *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	return k
}

func p8(k *ecdsa.PrivateKey) string {
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		panic(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
}

// URL is the origin to set as credentials.baseUrl (with a path prefix).
func (f *Fake) URL() string { return f.srv.URL + fakePrefix }

// SetClock sets the clock the fake checks provider tokens' age against.
func (f *Fake) SetClock(now func() time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = now
}

// ProviderTokens counts the distinct valid provider tokens the fake saw.
func (f *Fake) ProviderTokens() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.bearers)
}

func (f *Fake) clock() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now()
}

// Credentials are valid credentials pointing the provider at the fake.
func (f *Fake) Credentials() provider.Credentials {
	return provider.Credentials{"secretKey": p8(f.key), "apiKey": fakeKeyID, "projectName": fakeTeamID,
		"applicationId": fakeTopic, "secure": false, "baseUrl": f.URL()}
}

// BadCredentials sign with a key Apple does not know for that Key ID.
func (f *Fake) BadCredentials() provider.Credentials {
	c := f.Credentials()
	c["secretKey"] = p8(f.bad)
	return c
}

// Token is a device token of APNs' shape.
func Token(n int) string { return fmt.Sprintf("a9b8c7d6e5f4%052x", n) }

// Address gives the message a device token the fake accepts.
func (f *Fake) Address(m *provider.Message) { m.Tokens = []string{Token(int(f.seq.Load()))} }

// Close stops the server.
func (f *Fake) Close() { f.srv.Close() }

// Roots trust the fake's certificate.
func (f *Fake) Roots() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(f.srv.Certificate())
	return p
}

// Traits say which parts of the shared suite apply.
func (f *Fake) Traits() providertest.Traits {
	return providertest.Traits{Overrides: true, Origin: true}
}

func apnsError(w http.ResponseWriter, id string, status int, reason string) {
	w.Header().Set("apns-id", id)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	body := map[string]any{"reason": reason}
	if status == http.StatusGone {
		body["timestamp"] = time.Now().UnixMilli()
	}
	_ = json.NewEncoder(w).Encode(body)
}

// verify checks the provider token as APNs does; it returns the reason of a refusal.
func (f *Fake) verify(r *http.Request) string {
	bearer, ok := strings.CutPrefix(r.Header.Get("Authorization"), "bearer ")
	if !ok || bearer == "" {
		return "MissingProviderToken"
	}
	var claims jwt.RegisteredClaims
	tok, err := jwt.ParseWithClaims(bearer, &claims, func(*jwt.Token) (any, error) { return &f.key.PublicKey, nil },
		jwt.WithValidMethods([]string{"ES256"}), jwt.WithIssuer(fakeTeamID), jwt.WithoutClaimsValidation())
	if err != nil || tok.Header["kid"] != fakeKeyID || claims.IssuedAt == nil {
		return "InvalidProviderToken"
	}
	age := f.clock().Sub(claims.IssuedAt.Time)
	if age > time.Hour || age < -time.Minute {
		return "ExpiredProviderToken"
	}
	f.mu.Lock()
	f.bearers[bearer] = true
	f.mu.Unlock()
	return ""
}

func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	failure := f.Next()
	id := r.Header.Get("apns-id")
	if id != "" && !push.IsUUID(id) {
		apnsError(w, "", 400, "BadMessageId")
		return
	}
	if id == "" {
		id = push.UUID("apns-fake", fmt.Sprint(f.seq.Add(1)), f.srv.URL)
	}
	if r.ProtoMajor != 2 {
		// APNs speaks HTTP/2 only.
		apnsError(w, id, http.StatusHTTPVersionNotSupported, "HTTPVersionNotSupported")
		return
	}
	token, ok := strings.CutPrefix(r.URL.Path, fakePrefix+"/3/device/")
	switch {
	case r.Method != http.MethodPost:
		apnsError(w, id, 405, "MethodNotAllowed")
		return
	case !ok:
		apnsError(w, id, 404, "BadPath")
		return
	case token == "":
		apnsError(w, id, 400, "MissingDeviceToken")
		return
	}
	if reason := f.verify(r); reason != "" {
		apnsError(w, id, 403, reason)
		return
	}
	switch failure {
	case providertest.Rejected:
		apnsError(w, id, 413, "PayloadTooLarge")
		return
	case providertest.Unavailable:
		apnsError(w, id, 503, "ServiceUnavailable")
		return
	case providertest.RateLimited:
		apnsError(w, id, 429, "TooManyRequests")
		return
	case providertest.InvalidToken:
		apnsError(w, id, 410, "Unregistered")
		return
	case providertest.Hang:
		providertest.HangUntilGone(r)
		return
	}
	switch topic := r.Header.Get("apns-topic"); {
	case topic == "":
		apnsError(w, id, 400, "MissingTopic")
		return
	case !deviceToken.MatchString(token):
		apnsError(w, id, 400, "BadDeviceToken")
		return
	case topic != fakeTopic:
		apnsError(w, id, 400, "DeviceTokenNotForTopic")
		return
	}
	switch r.Header.Get("apns-push-type") {
	case "alert", "background", "location", "voip", "complication", "fileprovider", "mdm", "liveactivity",
		"pushtotalk", "widgets", "controls", "":
	default:
		apnsError(w, id, 400, "InvalidPushType")
		return
	}
	switch r.Header.Get("apns-priority") {
	case "", "1", "5", "10":
	default:
		apnsError(w, id, 400, "BadPriority")
		return
	}
	raw, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if len(raw) > maxPayload {
		apnsError(w, id, 413, "PayloadTooLarge")
		return
	}
	var body map[string]any
	if len(raw) == 0 || json.Unmarshal(raw, &body) != nil {
		apnsError(w, id, 400, "PayloadEmpty")
		return
	}
	aps, _ := body["aps"].(map[string]any)
	if aps == nil {
		apnsError(w, id, 400, "PayloadEmpty")
		return
	}
	d := providertest.Delivery{Tokens: []string{token}, Header: r.Header.Clone(), Body: raw, MessageID: id,
		Data: map[string]any{}}
	switch alert := aps["alert"].(type) {
	case string:
		d.Content = alert
	case map[string]any:
		d.Subject, _ = alert["title"].(string)
		d.Content, _ = alert["body"].(string)
	}
	for k, v := range body {
		if k != "aps" {
			d.Data[k] = v
		}
	}
	f.Record(d)
	w.Header().Set("apns-id", id)
	w.Header().Set("apns-unique-id", push.UUID("apns-unique", id))
	w.WriteHeader(http.StatusOK)
}
