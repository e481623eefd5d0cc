package deliveryevents

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"

	"github.com/herald-notify/herald/internal/store"
)

// Mailgun's webhooks: one JSON object {signature, "event-data"} a post; the
// signature is the hex HMAC-SHA256 of its timestamp and token with the
// HTTP webhook signing key. Herald's v:heraldMessageId comes back in
// event-data["user-variables"].

type mailgunSignature struct {
	Timestamp text `json:"timestamp"`
	Token     text `json:"token"`
	Signature text `json:"signature"`
}

type mailgunBody struct {
	Signature *mailgunSignature `json:"signature"`
	EventData json.RawMessage   `json:"event-data"`
}

type mailgunEvent struct {
	ID        text   `json:"id"`
	Event     text   `json:"event"`
	Severity  text   `json:"severity"`
	Timestamp number `json:"timestamp"`
	Reason    text   `json:"reason"`
	Message   struct {
		Headers struct {
			MessageID text `json:"message-id"`
		} `json:"headers"`
	} `json:"message"`
	UserVariables struct {
		HeraldID text `json:"heraldMessageId"`
	} `json:"user-variables"`
	DeliveryStatus struct {
		Description text `json:"description"`
		Message     text `json:"message"`
	} `json:"delivery-status"`
}

// mailgunBodyOf reads a post's envelope (nil when it is none).
func mailgunBodyOf(body []byte) *mailgunBody {
	var b mailgunBody
	if json.Unmarshal(body, &b) != nil {
		return nil
	}
	return &b
}

// mailgunAuthenticate checks signature.signature with the key.
func mailgunAuthenticate(req *Request, s Secrets) error {
	if s.Key == "" {
		return nil
	}
	b := mailgunBodyOf(req.Body)
	if b == nil || b.Signature == nil || b.Signature.Signature == "" {
		return ErrUnauthorized
	}
	mac := hmac.New(sha256.New, []byte(s.Key))
	mac.Write([]byte(b.Signature.Timestamp))
	mac.Write([]byte(b.Signature.Token))
	want := hex.EncodeToString(mac.Sum(nil))
	if subtle.ConstantTimeCompare([]byte(want), []byte(b.Signature.Signature)) != 1 {
		return ErrUnauthorized
	}
	return nil
}

func mailgunParse(req *Request) (Batch, error) {
	b := mailgunBodyOf(req.Body)
	if b == nil || len(b.EventData) == 0 {
		return Batch{}, malformed(`Mailgun posts a JSON object {"signature", "event-data"}`)
	}
	var ev mailgunEvent
	if json.Unmarshal(b.EventData, &ev) != nil {
		return Batch{Ignored: 1}, nil // event-data that is no object
	}
	var status string
	switch ev.Event {
	case "delivered", "opened", "clicked", "unsubscribed":
		status = string(ev.Event)
	case "failed":
		switch ev.Severity {
		case "permanent":
			status = "bounced"
		case "temporary":
			status = "deferred"
		}
	case "complained":
		status = "spam"
	case "rejected":
		status = "dropped"
	}
	if status == "" {
		return Batch{Ignored: 1}, nil
	}
	raw := rawJSON(b.EventData)
	identity := string(ev.ID)
	if identity == "" {
		identity = digest([]byte(raw))
	}
	var providerID string
	if id := ref(string(ev.Message.Headers.MessageID)); id != "" {
		providerID = "<" + id + ">"
	}
	reason := ev.DeliveryStatus.Description
	if reason == "" {
		reason = ev.DeliveryStatus.Message
	}
	if reason == "" {
		reason = ev.Reason
	}
	return Batch{Events: []store.DeliveryEvent{{Key: key(identity), Status: status, MessageID: ref(string(ev.UserVariables.HeraldID)),
		ProviderMessageID: providerID, OccurredAt: unixTime(ev.Timestamp, req.Now), Raw: raw,
		Detail: detail("Mailgun", status, reason)}}}, nil
}
