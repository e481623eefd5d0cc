package fcm

import (
	"context"
	"encoding/json"
	"net/url"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/herald-notify/herald/internal/provider"
)

// tokenCache keeps one sender's OAuth access token. One exchange runs at a
// time; sends that arrive meanwhile wait for it and share its token.
type tokenCache struct {
	turn      chan struct{} // held by the goroutine exchanging
	mu        sync.Mutex
	token     string
	refreshAt time.Time
}

func newTokenCache() tokenCache { return tokenCache{turn: make(chan struct{}, 1)} }

func (c *tokenCache) cached(now time.Time) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.token != "" && now.Before(c.refreshAt) {
		return c.token
	}
	return ""
}

// get returns a valid access token, exchanging a new one when needed.
func (c *tokenCache) get(ctx context.Context, now func() time.Time,
	exchange func(context.Context) (string, time.Duration, error)) (string, error) {
	if t := c.cached(now()); t != "" {
		return t, nil
	}
	select {
	case c.turn <- struct{}{}:
	case <-ctx.Done():
		return "", provider.AsError(ctx.Err())
	}
	defer func() { <-c.turn }()
	if t := c.cached(now()); t != "" {
		return t, nil // exchanged while this one waited
	}
	start := now()
	token, ttl, err := exchange(ctx)
	if err != nil {
		return "", err
	}
	margin := min(refreshMargin, ttl/2)
	c.mu.Lock()
	c.token, c.refreshAt = token, start.Add(ttl-margin)
	c.mu.Unlock()
	return token, nil
}

// drop forgets token if it is still the cached one.
func (c *tokenCache) drop(token string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.token == token {
		c.token = ""
	}
}

// exchange trades a signed JWT for an access token at the token_uri.
func (s *sender) exchange(ctx context.Context) (string, time.Duration, error) {
	now := s.cfg.Now()
	t := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{
		"iss": s.sa.ClientEmail, "scope": Scope, "aud": s.sa.TokenURI,
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix(),
	})
	if s.sa.PrivateKeyID != "" {
		t.Header["kid"] = s.sa.PrivateKeyID
	}
	assertion, err := t.SignedString(s.key)
	if err != nil {
		return "", 0, provider.Permanentf("signing the service account's JWT: %v", err)
	}
	form := url.Values{"grant_type": {GrantType}, "assertion": {assertion}}
	resp, err := provider.Do(ctx, s.cfg.HTTP, provider.FormRequest(s.sa.TokenURI, form, append(s.secrets, assertion)))
	if err != nil {
		pe := provider.AsError(err)
		pe.Reason = "token exchange: " + pe.Reason
		return "", 0, pe
	}
	var a struct {
		AccessToken string  `json:"access_token"`
		ExpiresIn   float64 `json:"expires_in"`
		TokenType   string  `json:"token_type"`
		Error       string  `json:"error"`
		Description string  `json:"error_description"`
	}
	_ = json.Unmarshal(resp.Body, &a)
	if !resp.OK() {
		reason := a.Error
		if a.Description != "" {
			reason += ": " + a.Description
		}
		// 4xx (invalid_grant: a wrong key or account) is permanent, 5xx transient.
		return "", 0, provider.StatusError(resp, "token exchange: "+reason)
	}
	if a.AccessToken == "" {
		return "", 0, &provider.Error{Class: provider.Transient, Status: resp.Status,
			Reason: "token exchange: the answer has no access_token", Raw: resp.Raw}
	}
	ttl := time.Duration(a.ExpiresIn * float64(time.Second))
	if ttl <= 0 {
		ttl = time.Hour
	}
	return a.AccessToken, ttl, nil
}
