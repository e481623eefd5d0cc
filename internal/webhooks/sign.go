package webhooks

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
)

// Standard Webhooks headers.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// secretKey is the HMAC key of a secret: the base64-decoded part after
// whsec_ (a secret without the prefix is taken whole, as the Standard
// Webhooks libraries do).
func secretKey(secret string) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, SecretPrefix))
	if err != nil {
		return nil, fmt.Errorf("webhooks: a secret is not whsec_ and base64: %w", err)
	}
	return key, nil
}

// Sign is the Standard Webhooks signature of a message: "v1," and the
// base64 HMAC-SHA256, keyed by the secret, of id.timestamp.body.
func Sign(secret, msgID string, timestamp int64, body []byte) (string, error) {
	key, err := secretKey(secret)
	if err != nil {
		return "", err
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(msgID))
	mac.Write([]byte{'.'})
	mac.Write([]byte(strconv.FormatInt(timestamp, 10)))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)), nil
}

// SignatureHeader is the webhook-signature value of a message signed with
// each secret (the current one first; during a rotation the previous one
// too), space-separated.
func SignatureHeader(secrets []string, msgID string, timestamp int64, body []byte) (string, error) {
	entries := make([]string, 0, len(secrets))
	for _, s := range secrets {
		sig, err := Sign(s, msgID, timestamp, body)
		if err != nil {
			return "", err
		}
		entries = append(entries, sig)
	}
	return strings.Join(entries, " "), nil
}
