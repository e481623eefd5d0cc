// Package secret owns Herald's cryptography: the AES-256-GCM box that keeps
// provider credentials encrypted at rest, API key generation and hashing,
// the signed short-lived session tokens of dashboard callers, and the inbox
// clients' subscriberHash and session tokens (inbox.go). Every key is derived
// from the one server secret (HERALD_SECRET or the generated one).
package secret

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Keys holds the keys derived from the server secret.
type Keys struct {
	aead         cipher.AEAD
	signing      []byte // dashboard session tokens
	inboxSigning []byte // inbox session tokens
}

// Derive builds the keys from the server secret.
func Derive(serverSecret string) (*Keys, error) {
	if len(serverSecret) < 16 {
		return nil, errors.New("secret: the server secret must be at least 16 characters")
	}
	enc := derive(serverSecret, "herald/credentials-encryption/v1")
	block, err := aes.NewCipher(enc)
	if err != nil {
		return nil, fmt.Errorf("secret: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("secret: %w", err)
	}
	return &Keys{aead: aead, signing: derive(serverSecret, "herald/session-signing/v1"),
		inboxSigning: derive(serverSecret, "herald/inbox-session-signing/v1")}, nil
}

func derive(serverSecret, purpose string) []byte {
	m := hmac.New(sha256.New, []byte(serverSecret))
	m.Write([]byte(purpose))
	return m.Sum(nil)
}

// Generate returns a new random server secret.
func Generate() string { return randomHex(32) }

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("secret: no randomness: " + err.Error())
	}
	return hex.EncodeToString(b)
}

// Seal encrypts plaintext; the result is printable and carries its nonce.
func (k *Keys) Seal(plaintext []byte) string {
	nonce := make([]byte, k.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		panic("secret: no randomness: " + err.Error())
	}
	return "v1:" + base64.RawStdEncoding.EncodeToString(k.aead.Seal(nonce, nonce, plaintext, nil))
}

// Open decrypts what Seal produced.
func (k *Keys) Open(sealed string) ([]byte, error) {
	if len(sealed) < 3 || sealed[:3] != "v1:" {
		return nil, errors.New("secret: unknown sealed format")
	}
	raw, err := base64.RawStdEncoding.DecodeString(sealed[3:])
	if err != nil || len(raw) < k.aead.NonceSize() {
		return nil, errors.New("secret: malformed sealed value")
	}
	n := k.aead.NonceSize()
	out, err := k.aead.Open(nil, raw[:n], raw[n:], nil)
	if err != nil {
		return nil, errors.New("secret: cannot decrypt (was the server secret changed?)")
	}
	return out, nil
}

// NewAPIKey returns a fresh API key. Keys carry 256 bits of randomness, so a
// single SHA-256 is the right hash: a slow password hash would add nothing but
// latency to every request.
func NewAPIKey() string { return "hk_" + randomHex(32) }

// HashAPIKey returns the stored form of an API key.
func HashAPIKey(key string) string {
	s := sha256.Sum256([]byte(key))
	return hex.EncodeToString(s[:])
}

// Session is what a dashboard session token asserts.
type Session struct {
	MemberID       string
	OrganizationID string
	EnvironmentID  string
	ExpiresAt      time.Time
}

type sessionClaims struct {
	Org string `json:"org"`
	Env string `json:"env"`
	jwt.RegisteredClaims
}

const issuer = "herald"

// SignSession returns a signed session token valid for ttl.
func (k *Keys) SignSession(s Session) (string, error) {
	claims := sessionClaims{
		Org: s.OrganizationID,
		Env: s.EnvironmentID,
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    issuer,
			Subject:   s.MemberID,
			IssuedAt:  jwt.NewNumericDate(time.Now()),
			ExpiresAt: jwt.NewNumericDate(s.ExpiresAt),
		},
	}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(k.signing)
}

// VerifySession checks a session token's signature and expiry. A token
// with an audience (an inbox session's) is not a dashboard session.
func (k *Keys) VerifySession(token string) (Session, error) {
	var c sessionClaims
	_, err := jwt.ParseWithClaims(token, &c, func(*jwt.Token) (any, error) { return k.signing, nil },
		jwt.WithValidMethods([]string{"HS256"}), jwt.WithIssuer(issuer), jwt.WithExpirationRequired())
	if err != nil {
		return Session{}, fmt.Errorf("secret: invalid session token: %w", err)
	}
	if len(c.Audience) > 0 {
		return Session{}, errors.New("secret: invalid session token: not a dashboard session")
	}
	return Session{MemberID: c.Subject, OrganizationID: c.Org, EnvironmentID: c.Env, ExpiresAt: c.ExpiresAt.Time}, nil
}
