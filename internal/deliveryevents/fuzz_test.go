package deliveryevents_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/herald-notify/herald/internal/deliveryevents"
	"github.com/herald-notify/herald/internal/deliveryevents/snsfake"
	"github.com/herald-notify/herald/internal/textcheck"
)

// The parsers take anyone's bytes: whatever they are, a parser returns a
// batch or one of its errors, never panics, and every value it keeps is
// text both stores hold, bounded.
//
//	go test ./internal/deliveryevents -run '^$' -fuzz FuzzParseSendGrid -fuzztime 30s

var statuses = map[string]bool{"sent": true, "delivered": true, "opened": true, "clicked": true, "bounced": true, "dropped": true,
	"deferred": true, "spam": true, "unsubscribed": true, "undelivered": true, "failed": true}

func fuzzParse(f *testing.F, provider string, seeds ...string) {
	for _, s := range seeds {
		f.Add([]byte(s), "id-1", "sig")
	}
	f.Fuzz(func(t *testing.T, body []byte, svixID, sig string) {
		req := &deliveryevents.Request{Header: http.Header{deliveryevents.SvixIDHeader: {svixID}, deliveryevents.SendGridSignatureHeader: {sig},
			"Authorization": {sig}, deliveryevents.TwilioSignatureHeader: {sig}}, Body: body, URL: "https://h.test/p?q=" + sig,
			Now: time.Unix(1924873766, 0)}
		for _, secrets := range []deliveryevents.Secrets{{Key: "key"}, {Key: "whsec_a2V5", Token: "token"}} {
			if err := deliveryevents.Authenticate(provider, req, secrets); err != nil && !errors.Is(err, deliveryevents.ErrUnauthorized) {
				t.Fatalf("authenticate: %v", err)
			}
		}
		requireParsed(t, provider, req)
	})
}

// requireParsed parses req: a batch or one of Parse's errors, every value
// it keeps text both stores hold, bounded.
func requireParsed(t *testing.T, provider string, req *deliveryevents.Request) {
	t.Helper()
	b, err := deliveryevents.Parse(provider, req)
	if err != nil {
		if !errors.Is(err, deliveryevents.ErrMalformed) && !errors.Is(err, deliveryevents.ErrTooMany) {
			t.Fatalf("parse: %v", err)
		}
		return
	}
	if b.Confirm != "" && deliveryevents.SNSURL(b.Confirm, false) != nil {
		t.Fatalf("a SubscribeURL not SNS's to confirm: %q", b.Confirm)
	}
	if len(b.Events) > deliveryevents.MaxEvents || b.Ignored < 0 {
		t.Fatalf("%d events, %d ignored", len(b.Events), b.Ignored)
	}
	for _, e := range b.Events {
		for name, v := range map[string]string{"key": e.Key, "message id": e.MessageID, "provider message id": e.ProviderMessageID,
			"detail": e.Detail, "raw": e.Raw} {
			if textcheck.Text(v) != nil {
				t.Fatalf("%s %q is not text every store holds", name, v)
			}
		}
		if e.Key == "" || len(e.Key) > 200 || len(e.MessageID) > 256 || len(e.ProviderMessageID) > 260 || len(e.Detail) > 500 {
			t.Fatalf("unbounded values: %+v", e)
		}
		if !statuses[e.Status] {
			t.Fatalf("status %q", e.Status)
		}
		if !json.Valid([]byte(e.Raw)) || !utf8.ValidString(e.Raw) {
			t.Fatalf("raw %q is not JSON", e.Raw)
		}
		if e.OccurredAt.IsZero() || e.OccurredAt.Year() > 9999 {
			t.Fatalf("occurred at %v", e.OccurredAt)
		}
	}
}

func FuzzParseSendGrid(f *testing.F) {
	fuzzParse(f, "sendgrid", `[{"event":"delivered","sg_event_id":"a","sg_message_id":"b.c","timestamp":1,"heraldMessageId":"x"}]`,
		`[{"event":"bounce","reason":"\u0000\ud800","timestamp":"1e400"},1,"x",null,[]]`, `{}`, `[`, strings.Repeat("[", 200))
}

func FuzzParseMailgun(f *testing.F) {
	fuzzParse(f, "mailgun", `{"signature":{"timestamp":"1","token":"t","signature":"s"},"event-data":{"event":"failed","severity":"permanent",`+
		`"id":"i","timestamp":1.5,"message":{"headers":{"message-id":"m@x"}},"user-variables":{"heraldMessageId":"h"}}}`,
		`{"event-data":[]}`, `{"event-data":{"event":{"x":1}}}`)
}

func FuzzParseResend(f *testing.F) {
	fuzzParse(f, "resend", `{"type":"email.bounced","created_at":"2031-03-14T15:09:26Z","data":{"email_id":"e","bounce":{"message":"m"}}}`,
		`{"type":1,"data":null}`, `null`)
}

func FuzzParsePostmark(f *testing.F) {
	fuzzParse(f, "postmark", `{"RecordType":"Bounce","MessageID":"m","BouncedAt":"2031-03-14T15:09:26-05:00","Metadata":{"heraldMessageId":"h"}}`,
		`{"RecordType":"Delivery","Metadata":"x"}`, `[]`)
}

func FuzzParseTwilio(f *testing.F) {
	fuzzParse(f, "twilio", "MessageSid=SM1&MessageStatus=delivered&ErrorCode=1", "MessageSid=%FF%00&MessageStatus=read",
		"a=%zz", "MessageSid=SM1&MessageSid=SM2&MessageStatus=failed&MessageStatus=sent", `{"MessageSid":"x"}`)
}

func FuzzParseSES(f *testing.F) {
	subject := "s"
	confirm := snsfake.SubscriptionConfirmation(snsfake.TopicArn, "tok", time.Unix(1924873766, 0))
	fuzzParse(f, "ses", string(snsfake.Body(snsfake.Notification(snsfake.TopicArn, "n1", sesDelivery("m", "h"), time.Unix(1924873766, 0)))),
		string(snsfake.Body(confirm)), string(snsfake.Body(&deliveryevents.SNSMessage{Type: "Notification", Subject: &subject, Message: "x"})),
		`{"Type":"Notification","Message":"{\"eventType\":\"Bounce\",\"bounce\":{\"bounceType\":\"Transient\"}}"}`,
		`{"Type":"SubscriptionConfirmation","SubscribeURL":"https://evil.test/"}`, `{"Type":["x"]}`, `{"Subject":null}`, `[]`)
}

// FuzzParseSESEvent fuzzes the SES event an SNS Notification carries, and
// SNS's verification of a post signed by the test certificate, served
// from memory.
func FuzzParseSESEvent(f *testing.F) {
	for _, s := range []string{sesDelivery("m", "h"), sesDelivery("m", ""), `{"notificationType":"Bounce","bounce":{"bounceType":"Permanent",` +
		`"bouncedRecipients":[{"diagnosticCode":"\u0000"},1]},"mail":{"messageId":"\ud800","tags":{"heraldMessageId":[[]]}}}`,
		`{"eventType":"Rendering Failure","failure":{"errorMessage":7}}`, `{"eventType":"DeliveryDelay","deliveryDelay":{"delayedRecipients":{}}}`,
		"not JSON", `{"eventType":"Click","mail":{"timestamp":"99999-01-01T00:00:00Z"}}`} {
		f.Add(s, "sns-id", "2")
	}
	sns := snsfake.New().SNS()
	now := time.Unix(1924873766, 0)
	f.Fuzz(func(t *testing.T, message, id, version string) {
		// SNS's messages are UTF-8 (JSON would carry other bytes as U+FFFD, unsigned).
		message, id = strings.ToValidUTF8(message, "\uFFFD"), strings.ToValidUTF8(id, "\uFFFD")
		m := &deliveryevents.SNSMessage{Type: deliveryevents.SNSNotification, MessageID: id, TopicArn: snsfake.TopicArn, Message: message,
			Timestamp: now.UTC().Format(time.RFC3339), SignatureVersion: version}
		if version == "1" || version == "2" {
			snsfake.Sign(m)
		}
		req := &deliveryevents.Request{Header: http.Header{}, Body: snsfake.Body(m), Now: now, SNS: sns}
		err := deliveryevents.Authenticate("ses", req, deliveryevents.Secrets{Key: snsfake.TopicArn})
		if signed := version == "1" || version == "2"; (err == nil) != signed {
			t.Fatalf("signed %v, authenticated: %v", signed, err)
		}
		requireParsed(t, "ses", req)
	})
}
