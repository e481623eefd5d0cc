// Package fcm delivers push notifications through Firebase Cloud Messaging's
// HTTP v1 API, authenticated with a Google service account (OAuth 2.0 JWT
// bearer grant), one call per device token.
package fcm

import (
	"context"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/url"
	"strings"
	"time"

	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/push"
)

// Entry registers the provider.
var Entry = provider.Entry{
	ID: "fcm", Channel: provider.Push,
	Credentials: []provider.Credential{
		{Key: "serviceAccount", Required: true, Secret: true},
		{Key: "baseUrl"},
	},
	New: New,
}

const (
	origin = "https://fcm.googleapis.com"
	// Scope is the OAuth scope of the FCM send API.
	Scope           = "https://www.googleapis.com/auth/firebase.messaging"
	defaultTokenURI = "https://oauth2.googleapis.com/token"
	// GrantType is the OAuth grant of a service account's signed JWT.
	GrantType = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	// refreshMargin: a cached access token is replaced this long before it expires.
	refreshMargin = 2 * time.Minute
)

// ServiceAccount is the part of a Google service-account key file FCM needs.
type ServiceAccount struct {
	Type         string `json:"type,omitempty"`
	ProjectID    string `json:"project_id"`
	PrivateKeyID string `json:"private_key_id"`
	PrivateKey   string `json:"private_key"`
	ClientEmail  string `json:"client_email"`
	TokenURI     string `json:"token_uri"`
}

type sender struct {
	cfg     provider.Config
	base    string
	sa      ServiceAccount
	key     *rsa.PrivateKey
	secrets []string
	tokens  tokenCache
}

// New builds a sender for one integration.
func New(cfg provider.Config) (provider.Sender, error) {
	base, err := provider.BaseURL(cfg.Credentials, origin)
	if err != nil {
		return nil, err
	}
	var sa ServiceAccount
	// The decoder's message is not shown: it can quote the credential.
	if json.Unmarshal([]byte(cfg.Credentials.String("serviceAccount")), &sa) != nil {
		return nil, provider.Permanentf("credentials.serviceAccount is not a service-account JSON document")
	}
	if sa.ProjectID == "" || sa.ClientEmail == "" || sa.PrivateKey == "" {
		return nil, provider.Permanentf("credentials.serviceAccount lacks project_id, client_email or private_key")
	}
	if sa.TokenURI == "" {
		sa.TokenURI = defaultTokenURI
	}
	if u, err := url.Parse(sa.TokenURI); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, provider.Permanentf("credentials.serviceAccount token_uri is not an http(s) URL")
	}
	key, err := parseKey(sa.PrivateKey)
	if err != nil {
		return nil, err
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	secrets := append(cfg.Secrets(), sa.PrivateKey, sa.PrivateKeyID)
	return &sender{cfg: cfg, base: base, sa: sa, key: key, secrets: secrets, tokens: newTokenCache()}, nil
}

// parseKey reads the service account's PEM RSA key (PKCS#8, or PKCS#1).
func parseKey(s string) (*rsa.PrivateKey, error) {
	block, _ := pem.Decode([]byte(s))
	if block == nil {
		return nil, provider.Permanentf("credentials.serviceAccount private_key is not PEM")
	}
	if k, err := x509.ParsePKCS8PrivateKey(block.Bytes); err == nil {
		if rk, ok := k.(*rsa.PrivateKey); ok {
			return rk, nil
		}
		return nil, provider.Permanentf("credentials.serviceAccount private_key is not an RSA key")
	}
	if k, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
		return k, nil
	}
	return nil, provider.Permanentf("credentials.serviceAccount private_key is not a PKCS#8 or PKCS#1 RSA key")
}

// Send delivers m to every device token (see package push for the rules).
func (s *sender) Send(ctx context.Context, m *provider.Message) (*provider.Result, error) {
	var out push.Outcome
	for _, token := range m.Tokens {
		access, err := s.tokens.get(ctx, s.cfg.Now, s.exchange)
		if err != nil {
			out.Failed(provider.AsError(err))
			break // the next token would need the same exchange
		}
		halt := s.sendOne(ctx, m, token, access, &out)
		if halt || ctx.Err() != nil {
			break
		}
	}
	return out.Result()
}

// sendOne sends to one token; it reports whether the other tokens would fail
// the same way (credentials or quota), so that they are not tried.
func (s *sender) sendOne(ctx context.Context, m *provider.Message, token, access string, out *push.Outcome) bool {
	msg := map[string]any{"token": token, "notification": map[string]any{"title": m.Subject, "body": m.Content}}
	if len(m.Data) > 0 {
		msg["data"] = stringData(m.Data)
	}
	msg = provider.Merge(msg, m.Overrides)
	u := s.base + "/v1/projects/" + url.PathEscape(s.sa.ProjectID) + "/messages:send"
	req, err := provider.JSONRequest(u, map[string]any{"message": msg}, append(s.secrets, access))
	if err != nil {
		out.Failed(provider.AsError(err))
		return true
	}
	req.Header.Set("Authorization", "Bearer "+access)
	resp, err := provider.Do(ctx, s.cfg.HTTP, req)
	if err != nil {
		out.Failed(provider.AsError(err))
		return true
	}
	out.Answer(resp.Raw)
	if resp.OK() {
		out.Delivered(provider.Path(resp.Body, "name"))
		return false
	}
	e, invalid, code := classify(resp)
	if invalid {
		out.Invalid(token, e)
		return false
	}
	out.Failed(e)
	switch {
	case resp.Status == 401:
		s.tokens.drop(access) // revoked or expired early: the next Send exchanges again
		return true
	case code == "THIRD_PARTY_AUTH_ERROR" || code == "QUOTA_EXCEEDED" || resp.Status == 429:
		return true
	}
	return false
}

// stringData is FCM's data map: string values, others as JSON.
func stringData(d map[string]any) map[string]string {
	out := make(map[string]string, len(d))
	for k, v := range d {
		if s, ok := v.(string); ok {
			out[k] = s
			continue
		}
		b, _ := json.Marshal(v)
		out[k] = string(b)
	}
	return out
}

// apiError is the body of a failed FCM call.
type apiError struct {
	Error struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Status  string `json:"status"`
		Details []struct {
			Type            string `json:"@type"`
			ErrorCode       string `json:"errorCode"`
			FieldViolations []struct {
				Field       string `json:"field"`
				Description string `json:"description"`
			} `json:"fieldViolations"`
		} `json:"details"`
	} `json:"error"`
}

// classify reads a failed call: the error, whether it refuses the token as
// invalid, and FCM's error code.
func classify(resp *provider.Response) (*provider.Error, bool, string) {
	var a apiError
	_ = json.Unmarshal(resp.Body, &a)
	code, aboutToken := "", false
	for _, d := range a.Error.Details {
		if strings.HasSuffix(d.Type, "google.firebase.fcm.v1.FcmError") && d.ErrorCode != "" {
			code = d.ErrorCode
		}
		for _, v := range d.FieldViolations {
			if v.Field == "message.token" {
				aboutToken = true
			}
		}
	}
	if code == "" {
		code = a.Error.Status
	}
	reason := strings.TrimSpace(strings.Trim(code+": "+a.Error.Message, ": "))
	e := provider.StatusError(resp, reason)
	if code == "UNREGISTERED" {
		return push.Refused(resp.Status, reason, resp.Raw), true, code
	}
	if resp.Status == 400 && (code == "INVALID_ARGUMENT" || a.Error.Status == "INVALID_ARGUMENT") &&
		(aboutToken || strings.Contains(strings.ToLower(a.Error.Message), "registration token")) {
		return push.Refused(resp.Status, reason, resp.Raw), true, code
	}
	return e, false, code
}
