// Package push holds what Herald's push providers share: the outcome of one
// Send to several device tokens, and stable UUIDs derived from a message's
// idempotency key. The providers themselves are its sub-packages.
//
// A Send to several tokens succeeds when at least one token was delivered;
// the tokens the provider refused as invalid are listed in
// Result.InvalidTokens (Herald removes them from the subscriber). When no
// token was delivered and every one was refused as invalid, the failure is
// a TokenInvalid *provider.Error; otherwise it is the failure of a token
// (a transient one when any was transient, so that the engine retries),
// still listing the invalid tokens. ProviderMessageID is the id of the
// first delivered token, in the order of Message.Tokens.
package push

import (
	"crypto/sha1" //nolint:gosec // UUID version 5 is defined with SHA-1
	"fmt"
	"strings"

	"github.com/herald-notify/herald/internal/provider"
)

// maxRaw bounds the answers kept together in a result's Raw.
const maxRaw = 4 << 10

// Outcome gathers what happened to each token of one Send. It is not safe
// for concurrent use: a sender fills one per Send.
type Outcome struct {
	answers  []string
	ids      []string
	invalid  []string
	refusal  *provider.Error // the first invalid-token answer
	failures []*provider.Error
}

// Answer keeps a raw answer of the provider (already redacted) for Raw.
func (o *Outcome) Answer(raw string) {
	if raw != "" {
		o.answers = append(o.answers, raw)
	}
}

// Delivered records a token the provider accepted, with its message id.
func (o *Outcome) Delivered(id string) { o.ids = append(o.ids, id) }

// Invalid records a token the provider refused as invalid or unregistered.
func (o *Outcome) Invalid(token string, e *provider.Error) {
	o.invalid = append(o.invalid, token)
	if o.refusal == nil {
		o.refusal = e
	}
}

// Failed records a failure that says nothing about a token's validity.
func (o *Outcome) Failed(e *provider.Error) { o.failures = append(o.failures, e) }

// InvalidTokens lists the tokens refused so far.
func (o *Outcome) InvalidTokens() []string { return o.invalid }

// Result is what the Send returns (see the package comment).
func (o *Outcome) Result() (*provider.Result, error) {
	raw := strings.Join(o.answers, "\n")
	if len(raw) > maxRaw {
		raw = raw[:maxRaw] + "…"
	}
	if len(o.ids) > 0 {
		return &provider.Result{ProviderMessageID: o.ids[0], Raw: raw, InvalidTokens: o.invalid}, nil
	}
	var e *provider.Error
	switch {
	case len(o.failures) == 0 && o.refusal != nil:
		e = o.refusal
		e.Class = provider.TokenInvalid
	case len(o.failures) > 0:
		e = o.failures[0]
		for _, f := range o.failures {
			if f.Class == provider.Transient {
				e = f
				break
			}
		}
	default:
		return nil, provider.Permanentf("no device token to send to")
	}
	e.InvalidTokens = o.invalid
	if raw != "" {
		e.Raw = raw
	}
	return nil, e
}

// Refused is the error of a token the provider refused as invalid.
func Refused(status int, reason, raw string) *provider.Error {
	return &provider.Error{Class: provider.TokenInvalid, Status: status, Reason: reason, Raw: raw}
}

// namespace is Herald's UUID namespace for name-based UUIDs.
var namespace = [16]byte{0x6b, 0x1e, 0x0c, 0x52, 0x8f, 0x3a, 0x4d, 0x2e, 0x9c, 0x41, 0x27, 0xd0, 0x5a, 0x6e, 0x13, 0xb8}

// UUID is a version 5 (name-based) UUID of parts, in canonical lower-case
// form: the same parts always give the same UUID, so that a retried
// delivery carries the id of its first try.
func UUID(parts ...string) string {
	h := sha1.New() //nolint:gosec // see the import
	h.Write(namespace[:])
	h.Write([]byte(strings.Join(parts, "\x00")))
	s := h.Sum(nil)[:16]
	s[6] = s[6]&0x0f | 0x50 // version 5
	s[8] = s[8]&0x3f | 0x80 // RFC 9562 variant
	return fmt.Sprintf("%x-%x-%x-%x-%x", s[0:4], s[4:6], s[6:8], s[8:10], s[10:16])
}

// IsUUID reports whether s is a UUID in canonical form (any case).
func IsUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, c := range s {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
				return false
			}
		}
	}
	return true
}
