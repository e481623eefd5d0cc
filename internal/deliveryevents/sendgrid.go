package deliveryevents

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/herald-notify/herald/internal/store"
)

// SendGrid's Event Webhook: a JSON array of events, Herald's custom_args
// (heraldMessageId) as top-level fields of each. A signed webhook carries an
// ECDSA P-256 signature of the timestamp header followed by the body.

// SendGrid's signature headers.
const (
	SendGridSignatureHeader = "X-Twilio-Email-Event-Webhook-Signature"
	SendGridTimestampHeader = "X-Twilio-Email-Event-Webhook-Timestamp"
)

// sendgridStatuses map SendGrid's `event` to webhookStatus.
var sendgridStatuses = map[string]string{
	"delivered": "delivered", "open": "opened", "click": "clicked", "bounce": "bounced", "dropped": "dropped",
	"deferred": "deferred", "spamreport": "spam", "unsubscribe": "unsubscribed", "group_unsubscribe": "unsubscribed",
}

// sendgridAuthenticate verifies the signature with the key, SendGrid's
// verification key (base64 of a DER SubjectPublicKeyInfo of a P-256 key).
// Without a key every post is accepted; with one, a post without the
// headers is refused.
func sendgridAuthenticate(req *Request, s Secrets) error {
	if s.Key == "" {
		return nil
	}
	pub, err := sendgridKey(s.Key)
	if err != nil {
		return fmt.Errorf("%w: the integration's verification key is not a P-256 public key", ErrUnauthorized)
	}
	sig, err := base64.StdEncoding.DecodeString(req.Header.Get(SendGridSignatureHeader))
	if err != nil || len(sig) == 0 {
		return ErrUnauthorized
	}
	h := sha256.New()
	h.Write([]byte(req.Header.Get(SendGridTimestampHeader)))
	h.Write(req.Body)
	if !ecdsa.VerifyASN1(pub, h.Sum(nil), sig) {
		return ErrUnauthorized
	}
	return nil
}

// sendgridKey reads a verification key.
func sendgridKey(k string) (*ecdsa.PublicKey, error) {
	der, err := base64.StdEncoding.DecodeString(strings.TrimSpace(k))
	if err != nil {
		return nil, err
	}
	parsed, err := x509.ParsePKIXPublicKey(der)
	if err != nil {
		return nil, err
	}
	pub, ok := parsed.(*ecdsa.PublicKey)
	if !ok || pub.Curve != elliptic.P256() {
		return nil, fmt.Errorf("not a P-256 key")
	}
	return pub, nil
}

// sendgridEvent is the part of a SendGrid event Herald reads.
type sendgridEvent struct {
	Event     text   `json:"event"`
	ID        text   `json:"sg_event_id"`
	MessageID text   `json:"sg_message_id"`
	Timestamp number `json:"timestamp"`
	HeraldID  text   `json:"heraldMessageId"`
	Reason    text   `json:"reason"`
	Response  text   `json:"response"`
}

func sendgridParse(req *Request) (Batch, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(req.Body, &items); err != nil {
		return Batch{}, malformed("SendGrid posts a JSON array of events")
	}
	if len(items) > MaxEvents {
		return Batch{}, fmt.Errorf("%w: %d events, at most %d", ErrTooMany, len(items), MaxEvents)
	}
	var b Batch
	for _, item := range items {
		var ev sendgridEvent
		if json.Unmarshal(item, &ev) != nil {
			b.Ignored++ // not an object
			continue
		}
		status, ok := sendgridStatuses[string(ev.Event)]
		if !ok {
			b.Ignored++
			continue
		}
		raw := rawJSON(item)
		identity := string(ev.ID)
		if identity == "" {
			identity = digest([]byte(raw))
		}
		// sg_message_id is the send's X-Message-Id, a dot and SendGrid's suffix.
		sent, _, _ := strings.Cut(string(ev.MessageID), ".")
		reason := ev.Reason
		if reason == "" {
			reason = ev.Response
		}
		b.Events = append(b.Events, store.DeliveryEvent{Key: key(identity), Status: status, MessageID: ref(string(ev.HeraldID)),
			ProviderMessageID: ref(sent), OccurredAt: unixTime(ev.Timestamp, req.Now), Raw: raw,
			Detail: detail("SendGrid", status, reason)})
	}
	return b, nil
}
