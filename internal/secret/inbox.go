package secret

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// The inbox clients' side: the public application identifier of an
// environment, the subscriberHash a subscriber's session is opened with, and
// the session token that the session route answers. Inbox tokens are signed
// with a key of their own and carry an audience of their own, so that an
// inbox token is never a dashboard session and a dashboard token never an
// inbox session.

// inboxAudience marks inbox session tokens.
const inboxAudience = "herald-inbox"

// NewApplicationIdentifier returns a fresh public application identifier:
// "app_" and 20 random lowercase hex characters (migration 0013 makes the
// same shape for environments created before it).
func NewApplicationIdentifier() string { return "app_" + randomHex(10) }

// SubscriberHash is the subscriberHash of subscriberID signed with key: the
// lowercase hex HMAC-SHA256 of the subscriberId keyed by the API key, as
// the inbox clients' users compute it on their servers.
func SubscriberHash(key, subscriberID string) string {
	m := hmac.New(sha256.New, []byte(key))
	m.Write([]byte(subscriberID))
	return hex.EncodeToString(m.Sum(nil))
}

// SubscriberHashMatches reports whether hash is the subscriberHash of
// subscriberID under any of keys. Every key is checked, each comparison in
// constant time, so the time taken says nothing about which key or how much
// of the hash matched. Upper-case hex is accepted.
func SubscriberHashMatches(hash, subscriberID string, keys []string) bool {
	sent, err := hex.DecodeString(hash)
	if err != nil || len(sent) != sha256.Size {
		return false
	}
	ok := 0
	for _, k := range keys {
		m := hmac.New(sha256.New, []byte(k))
		m.Write([]byte(subscriberID))
		if hmac.Equal(m.Sum(nil), sent) {
			ok = 1
		}
	}
	return ok == 1
}

// InboxSession is what an inbox session token asserts: one subscriber of
// one environment.
type InboxSession struct {
	OrganizationID string
	EnvironmentID  string
	// SubscriberID is the subscriber's _id; ExternalID its subscriberId.
	SubscriberID string
	ExternalID   string
	// ContextKeys, when set, narrows the session's lists to the
	// notifications triggered with exactly these context keys (sorted,
	// joined by ",").
	ContextKeys *string
	ExpiresAt   time.Time
}

type inboxClaims struct {
	Org string  `json:"org"`
	Env string  `json:"env"`
	Sub string  `json:"sid"`
	Ctx *string `json:"ctx,omitempty"`
	jwt.RegisteredClaims
}

// SignInboxSession returns a signed inbox session token.
func (k *Keys) SignInboxSession(s InboxSession) (string, error) {
	if s.SubscriberID == "" || s.EnvironmentID == "" {
		return "", errors.New("secret: an inbox session names a subscriber and an environment")
	}
	claims := inboxClaims{
		Org: s.OrganizationID,
		Env: s.EnvironmentID,
		Sub: s.ExternalID,
		Ctx: s.ContextKeys,
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    issuer,
			Audience:  jwt.ClaimStrings{inboxAudience},
			Subject:   s.SubscriberID,
			IssuedAt:  jwt.NewNumericDate(time.Now()),
			ExpiresAt: jwt.NewNumericDate(s.ExpiresAt),
		},
	}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(k.inboxSigning)
}

// VerifyInboxSession checks an inbox session token's signature, audience
// and expiry.
func (k *Keys) VerifyInboxSession(token string) (InboxSession, error) {
	var c inboxClaims
	_, err := jwt.ParseWithClaims(token, &c, func(*jwt.Token) (any, error) { return k.inboxSigning, nil },
		jwt.WithValidMethods([]string{"HS256"}), jwt.WithIssuer(issuer), jwt.WithAudience(inboxAudience),
		jwt.WithExpirationRequired())
	if err != nil {
		return InboxSession{}, fmt.Errorf("secret: invalid inbox session token: %w", err)
	}
	if c.Subject == "" || c.Env == "" {
		return InboxSession{}, errors.New("secret: invalid inbox session token: no subscriber or environment")
	}
	return InboxSession{OrganizationID: c.Org, EnvironmentID: c.Env, SubscriberID: c.Subject, ExternalID: c.Sub,
		ContextKeys: c.Ctx, ExpiresAt: c.ExpiresAt.Time}, nil
}
