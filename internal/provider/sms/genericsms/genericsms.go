// Package genericsms sends SMS through a user's own HTTP endpoint, as
// Novu's generic-sms ("Custom SMS") provider: a JSON POST to baseUrl (the
// whole endpoint) authenticated by configurable headers, optionally with a
// token obtained first from an auth URL (domain).
package genericsms

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/sms"
)

// Entry registers the provider.
var Entry = provider.Entry{
	ID: "generic-sms", Channel: provider.SMS,
	Credentials: []provider.Credential{
		{Key: "baseUrl", Required: true},
		{Key: "apiKeyRequestHeader", Required: true},
		{Key: "apiKey", Required: true, Secret: true},
		{Key: "from", Required: true},
		{Key: "secretKeyRequestHeader"},
		{Key: "secretKey", Secret: true},
		{Key: "idPath"},
		{Key: "datePath"},
		{Key: "authenticateByToken", Type: provider.TypeBoolean},
		{Key: "domain"},
		{Key: "authenticationTokenKey"},
	},
	New: New,
}

// tokenLife is how long an auth token is reused; a 401 or 403 drops it sooner.
const tokenLife = 5 * time.Minute

type sender struct {
	cfg      provider.Config
	endpoint string
	authURL  string

	mu      sync.Mutex
	token   string
	tokenAt time.Time
}

// New builds a sender for one integration.
func New(cfg provider.Config) (provider.Sender, error) {
	c := cfg.Credentials
	endpoint, err := provider.BaseURL(c, "")
	if err != nil {
		return nil, err
	}
	s := &sender{cfg: cfg, endpoint: endpoint}
	if c.Bool("authenticateByToken") {
		if c.String("authenticationTokenKey") == "" {
			return nil, provider.Permanentf("credentials.authenticationTokenKey is required with authenticateByToken")
		}
		if s.authURL, err = provider.BaseURL(provider.Credentials{"baseUrl": c.String("domain")}, ""); err != nil {
			return nil, provider.Permanentf("credentials.domain (the auth URL) is not an http(s) URL")
		}
	}
	if !validHeaderName(c.String("apiKeyRequestHeader")) {
		return nil, provider.Permanentf("credentials.apiKeyRequestHeader is not a header name")
	}
	return s, nil
}

func validHeaderName(h string) bool {
	if h == "" {
		return false
	}
	for i := 0; i < len(h); i++ {
		if c := h[i]; c <= ' ' || c >= 127 || c == ':' {
			return false
		}
	}
	return true
}

// keyHeaders are the api key (and secret) headers of every call.
func (s *sender) keyHeaders() http.Header {
	c := s.cfg.Credentials
	h := http.Header{}
	h.Set(c.String("apiKeyRequestHeader"), c.String("apiKey"))
	if name, v := c.String("secretKeyRequestHeader"), c.String("secretKey"); validHeaderName(name) && v != "" {
		h.Set(name, v)
	}
	return h
}

// authToken returns a cached token or asks the auth URL for one: Novu
// reads it at data.<authenticationTokenKey> of the answer.
func (s *sender) authToken(ctx context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	if s.cfg.Now != nil {
		now = s.cfg.Now()
	}
	if s.token != "" && now.Sub(s.tokenAt) < tokenLife {
		return s.token, nil
	}
	req := &provider.Request{Method: http.MethodPost, URL: s.authURL, Header: s.keyHeaders(), Secrets: s.cfg.Secrets()}
	resp, err := provider.Do(ctx, s.cfg.HTTP, req)
	if err != nil {
		return "", err
	}
	if !resp.OK() {
		e := provider.StatusError(resp, "the auth URL refused the key")
		return "", e
	}
	tok := provider.Path(resp.Body, "data."+s.cfg.Credentials.String("authenticationTokenKey"))
	if tok == "" {
		return "", &provider.Error{Class: provider.Permanent, Status: resp.Status, Reason: "authentication token missing from the auth URL's answer", Raw: resp.Raw}
	}
	s.token, s.tokenAt = tok, now
	return tok, nil
}

func (s *sender) dropToken() {
	s.mu.Lock()
	s.token = ""
	s.mu.Unlock()
}

func (s *sender) Send(ctx context.Context, m *provider.Message) (*provider.Result, error) {
	c := s.cfg.Credentials
	to, from, err := sms.Parties(c, m)
	if err != nil {
		return nil, err
	}
	body := map[string]any{"to": to, "content": m.Content, "id": m.ID, "sender": from}
	if m.From != "" {
		body["from"] = m.From
	}
	body = provider.Merge(body, m.Overrides)
	secrets := s.cfg.Secrets()
	req, err := provider.JSONRequest(s.endpoint, body, secrets)
	if err != nil {
		return nil, err
	}
	for k, v := range s.keyHeaders() {
		req.Header[k] = v
	}
	tokenKey := c.String("authenticationTokenKey")
	if s.authURL != "" {
		tok, err := s.authToken(ctx)
		if err != nil {
			return nil, err
		}
		req.Header.Set(tokenKey, tok)
		req.Secrets = append(req.Secrets, tok)
	}
	resp, err := provider.Do(ctx, s.cfg.HTTP, req)
	if err != nil {
		return nil, err
	}
	if !resp.OK() {
		if s.authURL != "" && (resp.Status == http.StatusUnauthorized || resp.Status == http.StatusForbidden) {
			s.dropToken()
		}
		return nil, provider.StatusError(resp, reason(resp.Body))
	}
	idPath := c.String("idPath")
	if idPath == "" {
		idPath = "id"
	}
	return &provider.Result{ProviderMessageID: provider.Path(resp.Body, idPath), Raw: resp.Raw}, nil
}

// reason is the message of a JSON error answer, when it has one.
func reason(body []byte) string {
	var e struct {
		Message string `json:"message"`
		Error   any    `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil {
		return ""
	}
	if e.Message != "" {
		return e.Message
	}
	if s, ok := e.Error.(string); ok {
		return s
	}
	return ""
}
