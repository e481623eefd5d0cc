package deliveryevents_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/deliveryevents"
	"github.com/herald-notify/herald/internal/store"
)

var received = time.Date(2031, 3, 14, 15, 9, 26, 0, time.UTC)

func parse(t *testing.T, provider string, h http.Header, body string) deliveryevents.Batch {
	t.Helper()
	b, err := deliveryevents.Parse(provider, &deliveryevents.Request{Header: h, Body: []byte(body), Now: received})
	require.NoError(t, err, body)
	return b
}

// statusOf is the status the provider's event of type typ maps to ("" for ignored).
func statusOf(t *testing.T, provider string, h http.Header, body string) string {
	t.Helper()
	b := parse(t, provider, h, body)
	if len(b.Events) == 0 {
		require.Equal(t, 1, b.Ignored, body)
		return ""
	}
	require.Len(t, b.Events, 1)
	return b.Events[0].Status
}

func TestStatuses(t *testing.T) {
	t.Parallel()
	sendgrid := map[string]string{"delivered": "delivered", "open": "opened", "click": "clicked", "bounce": "bounced",
		"dropped": "dropped", "deferred": "deferred", "spamreport": "spam", "unsubscribe": "unsubscribed",
		"group_unsubscribe": "unsubscribed", "processed": "", "group_resubscribe": "", "": ""}
	for event, want := range sendgrid {
		require.Equal(t, want, statusOf(t, "sendgrid", nil, fmt.Sprintf(`[{"event":%q,"sg_event_id":"e"}]`, event)), "sendgrid %s", event)
	}
	mailgun := map[string]string{`"delivered"`: "delivered", `"opened"`: "opened", `"clicked"`: "clicked",
		`"failed","severity":"permanent"`: "bounced", `"failed","severity":"temporary"`: "deferred", `"failed"`: "",
		`"complained"`: "spam", `"unsubscribed"`: "unsubscribed", `"rejected"`: "dropped", `"accepted"`: "", `"stored"`: ""}
	for event, want := range mailgun {
		require.Equal(t, want, statusOf(t, "mailgun", nil, `{"signature":{},"event-data":{"id":"x","event":`+event+`}}`), "mailgun %s", event)
	}
	resend := map[string]string{"email.sent": "sent", "email.delivered": "delivered", "email.delivery_delayed": "deferred",
		"email.bounced": "bounced", "email.complained": "spam", "email.opened": "opened", "email.clicked": "clicked",
		"email.failed": "failed", "email.scheduled": "", "contact.created": ""}
	for typ, want := range resend {
		require.Equal(t, want, statusOf(t, "resend", nil, fmt.Sprintf(`{"type":%q,"created_at":"2031-03-14T15:00:00.000Z","data":{"email_id":"re1"}}`, typ)),
			"resend %s", typ)
	}
	postmark := map[string]string{"Delivery": "delivered", "Bounce": "bounced", "Open": "opened", "Click": "clicked",
		"SpamComplaint": "spam", "SubscriptionChange": "", "delivery": ""}
	for typ, want := range postmark {
		require.Equal(t, want, statusOf(t, "postmark", nil, fmt.Sprintf(`{"RecordType":%q,"MessageID":"pm1"}`, typ)), "postmark %s", typ)
	}
	twilio := map[string]string{"sent": "sent", "delivered": "delivered", "undelivered": "undelivered", "failed": "failed",
		"read": "opened", "queued": "", "sending": "", "accepted": "", "receiving": "", "received": ""}
	for status, want := range twilio {
		require.Equal(t, want, statusOf(t, "twilio", nil, url.Values{"MessageSid": {"SM1"}, "MessageStatus": {status}}.Encode()),
			"twilio %s", status)
	}
	for status, want := range map[string]string{"sent": store.DetailStatus("delivered"), "opened": "Success", "clicked": "Success",
		"deferred": "Pending", "bounced": "Failed", "dropped": "Failed", "spam": "Failed", "unsubscribed": "Failed",
		"undelivered": "Failed", "failed": "Failed"} {
		require.Equal(t, want, store.DetailStatus(status), status)
	}
}

func TestSendGridBatch(t *testing.T) {
	t.Parallel()
	body := `[
	  {"email":"ada@example.com","timestamp":1924873766,"event":"delivered","sg_event_id":"sg-ev-1",
	   "sg_message_id":"14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.0","heraldMessageId":"0123456789abcdef01234567",
	   "response":"250 OK"},
	  {"email":"ada@example.com","timestamp":1924873767,"event":"bounce","sg_event_id":"sg-ev-2",
	   "sg_message_id":"14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.0","reason":"550 5.1.1 unknown user","type":"bounce"},
	  {"event":"processed","sg_event_id":"sg-ev-3"},
	  "not an event", 42, null,
	  {"event":"open","timestamp":"1924873768.5"}
	]`
	b := parse(t, "sendgrid", nil, body)
	require.Equal(t, 4, b.Ignored, "processed, and three items that are no event")
	require.Len(t, b.Events, 3)
	d := b.Events[0]
	require.Equal(t, "sg-ev-1", d.Key)
	require.Equal(t, "delivered", d.Status)
	require.Equal(t, "0123456789abcdef01234567", d.MessageID, "custom_args are top-level fields")
	require.Equal(t, "14c5d75ce93", d.ProviderMessageID, "sg_message_id up to its first dot")
	require.Equal(t, time.Unix(1924873766, 0).UTC(), d.OccurredAt)
	require.JSONEq(t, `{"email":"ada@example.com","timestamp":1924873766,"event":"delivered","sg_event_id":"sg-ev-1",
	   "sg_message_id":"14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.0","heraldMessageId":"0123456789abcdef01234567",
	   "response":"250 OK"}`, d.Raw, "raw is the array item")
	require.Equal(t, "Delivery event from SendGrid: delivered (250 OK)", d.Detail)
	require.Equal(t, "bounced", b.Events[1].Status)
	require.Equal(t, "Delivery event from SendGrid: bounced (550 5.1.1 unknown user)", b.Events[1].Detail)
	open := b.Events[2]
	require.True(t, strings.HasPrefix(open.Key, "sha256:"), "an event without sg_event_id is identified by its content")
	require.Equal(t, time.UnixMilli(1924873768500).UTC(), open.OccurredAt)
	require.Empty(t, open.MessageID)

	again := parse(t, "sendgrid", nil, `[{"event":"open","timestamp":"1924873768.5"}]`)
	require.Equal(t, open.Key, again.Events[0].Key, "the same content, the same identity")

	for name, bad := range map[string]string{"object": `{"event":"delivered"}`, "not JSON": `delivered`, "empty": ``} {
		_, err := deliveryevents.Parse("sendgrid", &deliveryevents.Request{Body: []byte(bad), Now: received})
		require.ErrorIs(t, err, deliveryevents.ErrMalformed, name)
	}
	many := "[" + strings.TrimSuffix(strings.Repeat(`{},`, deliveryevents.MaxEvents+1), ",") + "]"
	_, err := deliveryevents.Parse("sendgrid", &deliveryevents.Request{Body: []byte(many), Now: received})
	require.ErrorIs(t, err, deliveryevents.ErrTooMany)
	atMost := "[" + strings.TrimSuffix(strings.Repeat(`{"event":"open"},`, deliveryevents.MaxEvents), ",") + "]"
	full := parse(t, "sendgrid", nil, atMost)
	require.Len(t, full.Events, deliveryevents.MaxEvents)
}

func TestMailgunEvent(t *testing.T) {
	t.Parallel()
	body := `{"signature":{"timestamp":"1529006854","token":"tok","signature":"sig"},
	  "event-data":{"id":"CPgfbmQMTCKtHW6uIWtuVe","event":"failed","severity":"permanent","timestamp":1924873766.908181,
	    "message":{"headers":{"message-id":"20310314150926.1.ABC@mg.example.com"}},
	    "user-variables":{"heraldMessageId":"0123456789abcdef01234567"},
	    "delivery-status":{"description":"No such mailbox","code":550}}}`
	b := parse(t, "mailgun", nil, body)
	require.Len(t, b.Events, 1)
	e := b.Events[0]
	require.Equal(t, "CPgfbmQMTCKtHW6uIWtuVe", e.Key)
	require.Equal(t, "bounced", e.Status)
	require.Equal(t, "0123456789abcdef01234567", e.MessageID)
	require.Equal(t, "<20310314150926.1.ABC@mg.example.com>", e.ProviderMessageID, "the send's id keeps its angle brackets")
	require.Equal(t, time.UnixMilli(1924873766908).UTC(), e.OccurredAt)
	var raw map[string]any
	require.NoError(t, json.Unmarshal([]byte(e.Raw), &raw))
	require.Equal(t, "CPgfbmQMTCKtHW6uIWtuVe", raw["id"], "raw is event-data")
	require.NotContains(t, raw, "signature")
	require.Equal(t, "Delivery event from Mailgun: bounced (No such mailbox)", e.Detail)
	_, err := deliveryevents.Parse("mailgun", &deliveryevents.Request{Body: []byte(`[1]`), Now: received})
	require.ErrorIs(t, err, deliveryevents.ErrMalformed)
	_, err = deliveryevents.Parse("mailgun", &deliveryevents.Request{Body: []byte(`{"signature":{}}`), Now: received})
	require.ErrorIs(t, err, deliveryevents.ErrMalformed, "no event-data")
}

func TestResendEvent(t *testing.T) {
	t.Parallel()
	body := `{"type":"email.delivered","created_at":"2031-03-14T15:09:26.535Z","data":{"email_id":"4ef9a417-02e9-4d39-ad75-9611e0fcc33c","to":["ada@example.com"]}}`
	b := parse(t, "resend", header(deliveryevents.SvixIDHeader, "msg_2bkq"), body)
	require.Len(t, b.Events, 1)
	e := b.Events[0]
	require.Equal(t, "msg_2bkq", e.Key, "svix-id is the identity")
	require.Equal(t, "4ef9a417-02e9-4d39-ad75-9611e0fcc33c", e.ProviderMessageID)
	require.Empty(t, e.MessageID)
	require.Equal(t, time.Date(2031, 3, 14, 15, 9, 26, 535e6, time.UTC), e.OccurredAt)
	require.JSONEq(t, body, e.Raw)
	noTime := parse(t, "resend", nil, `{"type":"email.opened","created_at":"yesterday","data":{"email_id":"x"}}`)
	require.Equal(t, received, noTime.Events[0].OccurredAt, "a time that is none is the time of receipt")
}

func TestPostmarkEvent(t *testing.T) {
	t.Parallel()
	body := `{"RecordType":"Delivery","ServerID":23,"MessageStream":"outbound","MessageID":"883953f4-6105-42a2-a16a-77a8eac79483",
	  "Recipient":"ada@example.com","DeliveredAt":"2031-03-14T16:33:54.9070259Z","Details":"Test delivery webhook details",
	  "Metadata":{"heraldMessageId":"0123456789abcdef01234567"}}`
	b := parse(t, "postmark", nil, body)
	e := b.Events[0]
	require.Equal(t, "delivered", e.Status)
	require.Equal(t, "0123456789abcdef01234567", e.MessageID)
	require.Equal(t, "883953f4-6105-42a2-a16a-77a8eac79483", e.ProviderMessageID)
	require.Equal(t, time.Date(2031, 3, 14, 16, 33, 54, 907025900, time.UTC), e.OccurredAt)
	require.True(t, strings.HasPrefix(e.Key, "sha256:"), "the body is the identity")
	require.Equal(t, e.Key, parse(t, "postmark", nil, body).Events[0].Key)
	require.NotEqual(t, e.Key, parse(t, "postmark", nil, strings.Replace(body, "Test", "Other", 1)).Events[0].Key)
}

func TestTwilioCallback(t *testing.T) {
	t.Parallel()
	form := url.Values{"MessageSid": {"SM0123456789abcdef0123456789abcdef"}, "MessageStatus": {"undelivered"},
		"AccountSid": {"AC1"}, "ErrorCode": {"30003"}, "To": {"+15550100"}}
	b := parse(t, "twilio", nil, form.Encode())
	e := b.Events[0]
	require.Equal(t, "undelivered", e.Status)
	require.Equal(t, "SM0123456789abcdef0123456789abcdef", e.ProviderMessageID)
	require.Equal(t, "SM0123456789abcdef0123456789abcdef:undelivered", e.Key, "MessageSid with MessageStatus")
	require.Equal(t, received, e.OccurredAt, "Twilio's events are timed when received")
	require.JSONEq(t, `{"MessageSid":"SM0123456789abcdef0123456789abcdef","MessageStatus":"undelivered","AccountSid":"AC1",
	  "ErrorCode":"30003","To":"+15550100"}`, e.Raw, "the form as an object")
	require.Equal(t, "Delivery event from Twilio: undelivered (error 30003)", e.Detail)
	require.Equal(t, 1, parse(t, "twilio", nil, "MessageStatus=delivered").Ignored, "no MessageSid")
	_, err := deliveryevents.Parse("twilio", &deliveryevents.Request{Body: []byte("a=%zz"), Now: received})
	require.ErrorIs(t, err, deliveryevents.ErrMalformed)
}

// Values a store cannot hold, or of unbounded size, are never kept as sent.
func TestHostileValues(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 5000)
	b := parse(t, "sendgrid", nil, `[{"event":"delivered","sg_event_id":"`+long+`","sg_message_id":"`+long+`",
	  "heraldMessageId":"a\u0000b","reason":"`+long+`","timestamp":1e300}]`)
	e := b.Events[0]
	require.True(t, strings.HasPrefix(e.Key, "sha256:"), "a long identity is kept as its hash")
	require.Empty(t, e.ProviderMessageID, "an id no provider gives matches nothing")
	require.Empty(t, e.MessageID, "NUL")
	require.LessOrEqual(t, len(e.Detail), 500)
	require.Equal(t, received, e.OccurredAt, "a time out of range is the time of receipt")
	tw := parse(t, "twilio", nil, "MessageSid=SM1&MessageStatus=sent&Body=%00%FF")
	require.NotContains(t, tw.Events[0].Raw, "\x00")
	require.True(t, json.Valid([]byte(tw.Events[0].Raw)))
}
