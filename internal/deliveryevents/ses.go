package deliveryevents

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"strings"

	"github.com/herald-notify/herald/internal/store"
)

// Amazon SES publishes its events to an SNS topic, and SNS posts them to
// an HTTP(S) subscription (sns.go): each post is signed by SNS, and a
// Notification's Message is one SES event, of event publishing (eventType)
// or of the older notifications (notificationType). Herald's
// heraldMessageId comes back in mail.tags, as a list, with event
// publishing. The key, when set, is the topic's ARN: a post of another
// topic is refused.

// sesAuthenticate verifies SNS's signature (always: SNS's posts are always
// signed), and the TopicArn against the key when there is one.
func sesAuthenticate(req *Request, s Secrets) error {
	m, err := snsMessageOf(req.Body)
	if err != nil {
		return ErrUnauthorized
	}
	if t := req.Header.Get(SNSMessageTypeHeader); t != "" && t != m.Type {
		return ErrUnauthorized
	}
	if k := strings.TrimSpace(s.Key); k != "" && subtle.ConstantTimeCompare([]byte(k), []byte(m.TopicArn)) != 1 {
		return ErrUnauthorized
	}
	ctx := req.Context
	if ctx == nil {
		ctx = context.Background()
	}
	return req.SNS.verify(ctx, m, req.Now)
}

// sesBounced maps an SES bounce's bounceType to webhookStatus.
var sesBounced = map[string]string{"Permanent": "bounced", "Undetermined": "bounced", "Transient": "deferred"}

// sesEvent is the part of an SES event Herald reads.
type sesEvent struct {
	EventType        text `json:"eventType"`
	NotificationType text `json:"notificationType"`
	Mail             struct {
		MessageID text `json:"messageId"`
		Timestamp text `json:"timestamp"`
		Tags      struct {
			HeraldID firstText `json:"heraldMessageId"`
		} `json:"tags"`
	} `json:"mail"`
	Delivery struct {
		Timestamp    text `json:"timestamp"`
		SMTPResponse text `json:"smtpResponse"`
	} `json:"delivery"`
	Open struct {
		Timestamp text `json:"timestamp"`
	} `json:"open"`
	Click struct {
		Timestamp text `json:"timestamp"`
	} `json:"click"`
	Bounce struct {
		BounceType        text      `json:"bounceType"`
		BounceSubType     text      `json:"bounceSubType"`
		Timestamp         text      `json:"timestamp"`
		BouncedRecipients diagnosis `json:"bouncedRecipients"`
	} `json:"bounce"`
	Complaint struct {
		Timestamp             text `json:"timestamp"`
		ComplaintFeedbackType text `json:"complaintFeedbackType"`
	} `json:"complaint"`
	Reject struct {
		Reason text `json:"reason"`
	} `json:"reject"`
	DeliveryDelay struct {
		Timestamp         text      `json:"timestamp"`
		DelayType         text      `json:"delayType"`
		DelayedRecipients diagnosis `json:"delayedRecipients"`
	} `json:"deliveryDelay"`
	Failure struct {
		ErrorMessage text `json:"errorMessage"`
	} `json:"failure"`
}

// firstText is the first item of a JSON list (SES's tags are lists of
// strings), or a string, read leniently as text.
type firstText text

// UnmarshalJSON implements json.Unmarshaler.
func (f *firstText) UnmarshalJSON(b []byte) error {
	var list []json.RawMessage
	if len(b) > 0 && b[0] == '[' {
		if json.Unmarshal(b, &list) != nil || len(list) == 0 {
			return nil
		}
		b = list[0]
	}
	var t text
	_ = t.UnmarshalJSON(b)
	*f = firstText(t)
	return nil
}

// diagnosis is the first diagnosticCode of a list of SES's recipients,
// read leniently.
type diagnosis text

// UnmarshalJSON implements json.Unmarshaler.
func (d *diagnosis) UnmarshalJSON(b []byte) error {
	var list []struct {
		DiagnosticCode text `json:"diagnosticCode"`
	}
	if json.Unmarshal(b, &list) == nil {
		for _, r := range list {
			if r.DiagnosticCode != "" {
				*d = diagnosis(r.DiagnosticCode)
				return nil
			}
		}
	}
	return nil
}

func sesParse(req *Request) (Batch, error) {
	m, err := snsMessageOf(req.Body)
	if err != nil {
		return Batch{}, malformed("SNS posts a JSON object {Type, MessageId, Message, …}")
	}
	switch m.Type {
	case SNSSubscriptionConfirmation:
		if err := SNSURL(m.SubscribeURL, false); err != nil {
			return Batch{}, malformed("the SubscribeURL is not SNS's")
		}
		return Batch{Confirm: m.SubscribeURL}, nil
	case SNSUnsubscribeConfirmation:
		return Batch{}, nil
	case SNSNotification:
	default:
		return Batch{Ignored: 1}, nil
	}
	var ev sesEvent
	if err := json.Unmarshal([]byte(m.Message), &ev); err != nil {
		// A value of another type than SES's is read as none; a Message that
		// is no JSON (a message published by hand) is no event.
		var wrongType *json.UnmarshalTypeError
		if !errors.As(err, &wrongType) {
			return Batch{Ignored: 1}, nil
		}
	}
	typ := ev.EventType
	if typ == "" {
		typ = ev.NotificationType
	}
	var status string
	var at, reason text
	switch typ {
	case "Send":
		status = "sent"
	case "Delivery":
		status, at, reason = "delivered", ev.Delivery.Timestamp, ev.Delivery.SMTPResponse
	case "Open":
		status, at = "opened", ev.Open.Timestamp
	case "Click":
		status, at = "clicked", ev.Click.Timestamp
	case "Bounce":
		status, at, reason = sesBounced[string(ev.Bounce.BounceType)], ev.Bounce.Timestamp, text(ev.Bounce.BouncedRecipients)
		if reason == "" {
			reason = text(strings.TrimSpace(string(ev.Bounce.BounceType + " " + ev.Bounce.BounceSubType)))
		}
	case "Complaint":
		status, at, reason = "spam", ev.Complaint.Timestamp, ev.Complaint.ComplaintFeedbackType
	case "Reject":
		status, reason = "dropped", ev.Reject.Reason
	case "DeliveryDelay":
		status, at, reason = "deferred", ev.DeliveryDelay.Timestamp, text(ev.DeliveryDelay.DelayedRecipients)
		if reason == "" {
			reason = ev.DeliveryDelay.DelayType
		}
	case "Rendering Failure":
		status, reason = "failed", ev.Failure.ErrorMessage
	}
	if status == "" {
		return Batch{Ignored: 1}, nil
	}
	if at == "" {
		at = ev.Mail.Timestamp
	}
	raw := rawJSON([]byte(m.Message))
	identity := m.MessageID
	if identity == "" {
		identity = digest([]byte(raw))
	}
	return Batch{Events: []store.DeliveryEvent{{Key: key(identity), Status: status, MessageID: ref(string(ev.Mail.Tags.HeraldID)),
		ProviderMessageID: ref(string(ev.Mail.MessageID)), OccurredAt: isoTime(at, req.Now), Raw: raw,
		Detail: detail("Amazon SES", status, reason)}}}, nil
}
