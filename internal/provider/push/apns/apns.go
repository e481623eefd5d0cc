// Package apns delivers push notifications through Apple's Push
// Notification service: HTTP/2 requests authenticated with a provider token
// (an ES256 JWT signed with the team's .p8 key), one per device token.
package apns

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/push"
)

// Entry registers the provider.
var Entry = provider.Entry{
	ID: "apns", Channel: provider.Push,
	Credentials: []provider.Credential{
		{Key: "secretKey", Required: true, Secret: true},
		{Key: "apiKey", Required: true, Secret: true},
		{Key: "projectName", Required: true},
		{Key: "applicationId", Required: true},
		{Key: "secure", Type: provider.TypeBoolean},
		{Key: "baseUrl"},
	},
	New: New,
}

const (
	productionOrigin  = "https://api.push.apple.com"
	developmentOrigin = "https://api.sandbox.push.apple.com"
	// tokenReuse: Apple refuses provider tokens older than an hour and
	// refreshes more often than every 20 minutes.
	tokenReuse = 50 * time.Minute
)

type sender struct {
	cfg     provider.Config
	base    string
	key     *ecdsa.PrivateKey
	keyID   string
	teamID  string
	topic   string
	secrets []string

	mu     sync.Mutex
	jwt    string
	issued time.Time
}

// New builds a sender for one integration.
func New(cfg provider.Config) (provider.Sender, error) {
	c := cfg.Credentials
	def := developmentOrigin
	if c.Bool("secure") {
		def = productionOrigin
	}
	base, err := provider.BaseURL(c, def)
	if err != nil {
		return nil, err
	}
	key, err := ParseKey(c.String("secretKey"))
	if err != nil {
		return nil, err
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &sender{cfg: cfg, base: base, key: key, keyID: c.String("apiKey"), teamID: c.String("projectName"),
		topic: c.String("applicationId"), secrets: cfg.Secrets()}, nil
}

// ParseKey reads a .p8 key: a PEM PKCS#8 ECDSA P-256 private key.
func ParseKey(s string) (*ecdsa.PrivateKey, error) {
	block, _ := pem.Decode([]byte(s))
	if block == nil {
		return nil, provider.Permanentf("credentials.secretKey is not a PEM .p8 key")
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, provider.Permanentf("credentials.secretKey is not a PKCS#8 private key")
	}
	ek, ok := k.(*ecdsa.PrivateKey)
	if !ok || ek.Curve != elliptic.P256() {
		return nil, provider.Permanentf("credentials.secretKey is not an ECDSA P-256 key")
	}
	return ek, nil
}

// providerToken returns the cached JWT, signing a new one when it is old.
func (s *sender) providerToken() (string, error) {
	now := s.cfg.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.jwt != "" && !now.Before(s.issued) && now.Sub(s.issued) < tokenReuse {
		return s.jwt, nil
	}
	t := jwt.NewWithClaims(jwt.SigningMethodES256, jwt.MapClaims{"iss": s.teamID, "iat": now.Unix()})
	t.Header["kid"] = s.keyID
	signed, err := t.SignedString(s.key)
	if err != nil {
		return "", provider.Permanentf("signing the provider token: %v", err)
	}
	s.jwt, s.issued = signed, now
	return signed, nil
}

// dropToken forgets token if it is still the cached one (Apple found it expired).
func (s *sender) dropToken(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.jwt == token {
		s.jwt = ""
	}
}

// Send delivers m to every device token (see package push for the rules).
func (s *sender) Send(ctx context.Context, m *provider.Message) (*provider.Result, error) {
	var out push.Outcome
	for _, token := range m.Tokens {
		if s.sendOne(ctx, m, token, &out) || ctx.Err() != nil {
			break
		}
	}
	return out.Result()
}

// apsKeys are the override keys that belong in the aps dictionary (Novu's
// camelCase names, as its APNs provider takes them, and Apple's own).
var apsKeys = map[string]string{
	"alert": "alert", "badge": "badge", "sound": "sound", "category": "category",
	"threadId": "thread-id", "thread-id": "thread-id",
	"contentAvailable": "content-available", "content-available": "content-available",
	"mutableContent": "mutable-content", "mutable-content": "mutable-content",
	"targetContentId": "target-content-id", "target-content-id": "target-content-id",
	"interruptionLevel": "interruption-level", "interruption-level": "interruption-level",
	"relevanceScore": "relevance-score", "relevance-score": "relevance-score",
}

// payload is the notification's JSON: the aps dictionary, the message's
// data as custom keys, and the overrides.
func payload(m *provider.Message) map[string]any {
	aps := map[string]any{"alert": map[string]any{"title": m.Subject, "body": m.Content}}
	body := map[string]any{}
	for k, v := range m.Data {
		if k != "aps" { // custom keys never replace Apple's dictionary
			body[k] = v
		}
	}
	rest := map[string]any{}
	for k, v := range m.Overrides {
		if name, ok := apsKeys[k]; ok {
			provider.Merge(aps, map[string]any{name: v})
		} else {
			rest[k] = v
		}
	}
	body["aps"] = aps
	return provider.Merge(body, rest)
}

// sendOne sends to one token; it reports whether the other tokens would fail
// the same way (the provider token), so that they are not tried.
func (s *sender) sendOne(ctx context.Context, m *provider.Message, token string, out *push.Outcome) bool {
	bearer, err := s.providerToken()
	if err != nil {
		out.Failed(provider.AsError(err))
		return true
	}
	req, err := provider.JSONRequest(s.base+"/3/device/"+url.PathEscape(token), payload(m), append(s.secrets, bearer))
	if err != nil {
		out.Failed(provider.AsError(err))
		return true
	}
	req.Header.Set("Authorization", "bearer "+bearer)
	req.Header.Set("Apns-Topic", s.topic)
	req.Header.Set("Apns-Push-Type", "alert")
	req.Header.Set("Apns-Priority", "10")
	if key := firstOf(m.IdempotencyKey, m.ID); key != "" {
		// The same delivery to the same token always carries the same id.
		req.Header.Set("Apns-Id", push.UUID(key, token))
	}
	resp, err := provider.Do(ctx, s.cfg.HTTP, req)
	if err != nil {
		out.Failed(provider.AsError(err))
		return true
	}
	out.Answer(resp.Raw)
	if resp.OK() {
		out.Delivered(resp.Header.Get("Apns-Id"))
		return false
	}
	var a struct {
		Reason string `json:"reason"`
	}
	_ = json.Unmarshal(resp.Body, &a)
	switch {
	case resp.Status == 410 || (resp.Status == 400 && (a.Reason == "BadDeviceToken" || a.Reason == "DeviceTokenNotForTopic")):
		out.Invalid(token, push.Refused(resp.Status, a.Reason, resp.Raw))
		return false
	case resp.Status == 403:
		if a.Reason == "ExpiredProviderToken" {
			s.dropToken(bearer)
		}
		out.Failed(provider.StatusError(resp, a.Reason))
		return true
	}
	// 429 TooManyRequests is about this device token: the others may go.
	out.Failed(provider.StatusError(resp, a.Reason))
	return false
}

func firstOf(list ...string) string {
	for _, s := range list {
		if s = strings.TrimSpace(s); s != "" {
			return s
		}
	}
	return ""
}
