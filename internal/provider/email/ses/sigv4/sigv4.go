// Package sigv4 signs requests with AWS Signature Version 4, written from
// the specification: a canonical request, a string to sign over its hash and
// the credential scope, and an HMAC chain deriving the signing key from the
// secret. The SES sender signs with it and SES's wire fake verifies with it.
package sigv4

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"
)

const (
	// Algorithm opens the Authorization header of a signed request.
	Algorithm = "AWS4-HMAC-SHA256"
	// DateFormat is the layout of X-Amz-Date.
	DateFormat = "20060102T150405Z"
)

// Key is what signs: the key pair and the scope it is used in.
type Key struct {
	ID, Secret, Region, Service string
}

// Sign adds X-Amz-Date and Authorization to h for a request to u with
// body. It signs the host, Content-Type and every X-Amz-* header.
func (k Key) Sign(method string, u *url.URL, h http.Header, body []byte, now time.Time) {
	stamp := now.UTC().Format(DateFormat)
	h.Set("X-Amz-Date", stamp)
	var names []string
	for name := range h {
		l := strings.ToLower(name)
		if l == "content-type" || strings.HasPrefix(l, "x-amz-") {
			names = append(names, l)
		}
	}
	names = append(names, "host")
	sort.Strings(names)
	values := func(name string) []string {
		if name == "host" {
			return []string{u.Host}
		}
		return h.Values(name)
	}
	creq := CanonicalRequest(method, u.Path, u.Query(), names, values, HashHex(body))
	scope := stamp[:8] + "/" + k.Region + "/" + k.Service + "/aws4_request"
	h.Set("Authorization", Algorithm+" Credential="+k.ID+"/"+scope+", SignedHeaders="+strings.Join(names, ";")+
		", Signature="+k.Signature(stamp, creq))
}

// Signature is the hex HMAC of the string to sign under the derived key.
func (k Key) Signature(stamp, canonical string) string {
	scope := stamp[:8] + "/" + k.Region + "/" + k.Service + "/aws4_request"
	toSign := Algorithm + "\n" + stamp + "\n" + scope + "\n" + HashHex([]byte(canonical))
	key := hmacSHA256([]byte("AWS4"+k.Secret), stamp[:8])
	for _, part := range []string{k.Region, k.Service, "aws4_request"} {
		key = hmacSHA256(key, part)
	}
	return hex.EncodeToString(hmacSHA256(key, toSign))
}

// CanonicalRequest is the request in the form both sides hash: method,
// URI (each segment percent-encoded), sorted query, the signed headers
// (lower-case names, trimmed values, repeated ones joined by commas),
// their names, and the payload's hash.
func CanonicalRequest(method, path string, query url.Values, signed []string, values func(string) []string, payloadHash string) string {
	var b strings.Builder
	b.WriteString(method + "\n")
	if path == "" {
		path = "/"
	}
	segs := strings.Split(path, "/")
	for i, s := range segs {
		segs[i] = uriEncode(s)
	}
	b.WriteString(strings.Join(segs, "/") + "\n")
	var pairs []string
	for k, vs := range query {
		for _, v := range vs {
			pairs = append(pairs, uriEncode(k)+"="+uriEncode(v))
		}
	}
	sort.Strings(pairs)
	b.WriteString(strings.Join(pairs, "&") + "\n")
	for _, name := range signed {
		vs := values(name)
		trimmed := make([]string, len(vs))
		for i, v := range vs {
			trimmed[i] = strings.Join(strings.Fields(v), " ")
		}
		b.WriteString(name + ":" + strings.Join(trimmed, ",") + "\n")
	}
	b.WriteString("\n" + strings.Join(signed, ";") + "\n" + payloadHash)
	return b.String()
}

// uriEncode percent-encodes all but RFC 3986's unreserved characters.
func uriEncode(s string) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == '~' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&15])
	}
	return b.String()
}

// HashHex is the hex SHA-256 of b (a payload's hash).
func HashHex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func hmacSHA256(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}
