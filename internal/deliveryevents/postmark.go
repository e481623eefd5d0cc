package deliveryevents

import (
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/herald-notify/herald/internal/store"
)

// Postmark's webhooks: one JSON object a post, its RecordType saying what
// happened; Herald's Metadata.heraldMessageId comes back. Postmark signs
// nothing: its webhook URL carries HTTP Basic credentials (https://user:
// password@…), the key being "user:password".

var postmarkStatuses = map[string]string{
	"Delivery": "delivered", "Bounce": "bounced", "Open": "opened", "Click": "clicked", "SpamComplaint": "spam",
}

// postmarkAuthenticate compares the Basic credentials with the key.
func postmarkAuthenticate(req *Request, s Secrets) error {
	if s.Key == "" {
		return nil
	}
	scheme, cred, _ := strings.Cut(req.Header.Get("Authorization"), " ")
	got, err := base64.StdEncoding.DecodeString(strings.TrimSpace(cred))
	if !strings.EqualFold(scheme, "Basic") || err != nil {
		return ErrUnauthorized
	}
	if subtle.ConstantTimeCompare(got, []byte(s.Key)) != 1 {
		return ErrUnauthorized
	}
	return nil
}

type postmarkEvent struct {
	RecordType  text `json:"RecordType"`
	MessageID   text `json:"MessageID"`
	DeliveredAt text `json:"DeliveredAt"`
	BouncedAt   text `json:"BouncedAt"`
	ReceivedAt  text `json:"ReceivedAt"`
	Description text `json:"Description"`
	Details     text `json:"Details"`
	Metadata    struct {
		HeraldID text `json:"heraldMessageId"`
	} `json:"Metadata"`
}

func postmarkParse(req *Request) (Batch, error) {
	var ev postmarkEvent
	if json.Unmarshal(req.Body, &ev) != nil {
		return Batch{}, malformed("Postmark posts a JSON object with RecordType")
	}
	status, ok := postmarkStatuses[string(ev.RecordType)]
	if !ok {
		return Batch{Ignored: 1}, nil
	}
	raw := rawJSON(req.Body)
	at := ev.DeliveredAt
	switch status {
	case "bounced", "spam":
		at = ev.BouncedAt
	case "opened", "clicked":
		at = ev.ReceivedAt
	}
	reason := ev.Description
	if reason == "" {
		reason = ev.Details
	}
	// Postmark gives an event no id: the body is its identity.
	return Batch{Events: []store.DeliveryEvent{{Key: digest([]byte(raw)), Status: status, MessageID: ref(string(ev.Metadata.HeraldID)),
		ProviderMessageID: ref(string(ev.MessageID)), OccurredAt: isoTime(at, req.Now), Raw: raw,
		Detail: detail("Postmark", status, reason)}}}, nil
}
