package deliveryevents_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/deliveryevents"
	"github.com/herald-notify/herald/internal/deliveryevents/snsfake"
	"github.com/herald-notify/herald/internal/netguard"
)

// snsPost is a post of m as SNS sends it, verified with sns, at now.
func snsPost(m *deliveryevents.SNSMessage, sns *deliveryevents.SNS, now time.Time) *deliveryevents.Request {
	return &deliveryevents.Request{Header: header(deliveryevents.SNSMessageTypeHeader, m.Type, "Content-Type", "text/plain; charset=UTF-8"),
		Body: snsfake.Body(m), Now: now, Context: context.Background(), SNS: sns}
}

// sesDelivery is an SES Delivery event (event publishing) of the SES
// message messageID, tagged with Herald's heraldID when not empty.
func sesDelivery(messageID, heraldID string) string {
	tags := `{"ses:configuration-set":["herald"]}`
	if heraldID != "" {
		tags = `{"ses:configuration-set":["herald"],"heraldMessageId":["` + heraldID + `"]}`
	}
	return `{"eventType":"Delivery","mail":{"timestamp":"2031-03-14T15:09:20.000Z","source":"noreply@herald.test","messageId":"` +
		messageID + `","destination":["ada@example.com"],"tags":` + tags + `},"delivery":{"timestamp":"2031-03-14T15:09:26.535Z",` +
		`"processingTimeMillis":6535,"recipients":["ada@example.com"],"smtpResponse":"250 2.6.0 Message received","reportingMTA":"a8-1.smtp-out.amazonses.com"}}`
}

// The canonical strings, written out as AWS documents them: byte order of
// the names, Subject only when there is one.
func TestSNSStringToSign(t *testing.T) {
	t.Parallel()
	subject := "Hi"
	n := deliveryevents.SNSMessage{Type: "Notification", MessageID: "m1", TopicArn: "arn:t", Message: "body\nline", Timestamp: "2031-03-14T15:09:26.000Z",
		Token: "never signed", SubscribeURL: "https://never.signed/"}
	got, err := n.StringToSign()
	require.NoError(t, err)
	require.Equal(t, "Message\nbody\nline\nMessageId\nm1\nTimestamp\n2031-03-14T15:09:26.000Z\nTopicArn\narn:t\nType\nNotification\n", got)
	n.Subject = &subject
	got, err = n.StringToSign()
	require.NoError(t, err)
	require.Equal(t, "Message\nbody\nline\nMessageId\nm1\nSubject\nHi\nTimestamp\n2031-03-14T15:09:26.000Z\nTopicArn\narn:t\nType\nNotification\n", got)
	c := deliveryevents.SNSMessage{Type: "SubscriptionConfirmation", MessageID: "m2", TopicArn: "arn:t", Message: "confirm", Token: "tok",
		SubscribeURL: "https://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription", Timestamp: "2031-03-14T15:09:26.000Z", Subject: &subject}
	got, err = c.StringToSign()
	require.NoError(t, err)
	require.Equal(t, "Message\nconfirm\nMessageId\nm2\nSubscribeURL\nhttps://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription\n"+
		"Timestamp\n2031-03-14T15:09:26.000Z\nToken\ntok\nTopicArn\narn:t\nType\nSubscriptionConfirmation\n", got)
	c.Type = "UnsubscribeConfirmation"
	got, err = c.StringToSign()
	require.NoError(t, err)
	require.True(t, strings.HasSuffix(got, "Type\nUnsubscribeConfirmation\n"))
	c.Type = "Other"
	_, err = c.StringToSign()
	require.Error(t, err)
}

// Signatures of both versions verify with the certificate SigningCertURL
// names; a wrong one, a stale one, another topic's are refused.
func TestSESSignature(t *testing.T) {
	t.Parallel()
	fake := snsfake.New()
	sns := fake.SNS()
	now := time.Now()
	for _, version := range []string{"1", "2"} {
		m := &deliveryevents.SNSMessage{Type: deliveryevents.SNSNotification, MessageID: "v" + version, TopicArn: snsfake.TopicArn,
			Message: sesDelivery("ses-1", ""), Timestamp: now.UTC().Format(time.RFC3339Nano), SignatureVersion: version}
		snsfake.Sign(m)
		require.NoError(t, deliveryevents.Authenticate("ses", snsPost(m, sns, now), deliveryevents.Secrets{}), "version %s", version)
		require.NoError(t, deliveryevents.Authenticate("ses", snsPost(m, sns, now), deliveryevents.Secrets{Key: snsfake.TopicArn}),
			"the key is the topic's ARN")
		c := snsfake.SubscriptionConfirmation(snsfake.TopicArn, "tok"+version, now)
		require.NoError(t, deliveryevents.Authenticate("ses", snsPost(c, sns, now), deliveryevents.Secrets{}), "confirmation %s", version)
	}
	require.Equal(t, 1, fake.Fetches(), "the certificate is fetched once, then kept")

	other, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	// Changed after signing, posted now.
	changed := map[string]func(m *deliveryevents.SNSMessage){
		"another key": func(m *deliveryevents.SNSMessage) {
			require.NoError(t, deliveryevents.SNSSign(m, other))
		},
		"another message": func(m *deliveryevents.SNSMessage) {
			m.Message = sesDelivery("ses-2", "")
		},
		"a subject added": func(m *deliveryevents.SNSMessage) {
			s := ""
			m.Subject = &s
		},
		"the version changed": func(m *deliveryevents.SNSMessage) {
			m.SignatureVersion = "1"
		},
		"version 3": func(m *deliveryevents.SNSMessage) {
			m.SignatureVersion = "3"
		},
		"no signature": func(m *deliveryevents.SNSMessage) {
			m.Signature = ""
		},
		"signature not base64": func(m *deliveryevents.SNSMessage) {
			m.Signature = "!!"
		},
		"another type": func(m *deliveryevents.SNSMessage) {
			m.Type = "Other"
		},
	}
	refused := map[string]func(m *deliveryevents.SNSMessage) *deliveryevents.Request{
		"stale": func(m *deliveryevents.SNSMessage) *deliveryevents.Request {
			return snsPost(m, sns, now.Add(time.Hour+time.Second))
		},
		"from the future": func(m *deliveryevents.SNSMessage) *deliveryevents.Request {
			return snsPost(m, sns, now.Add(-time.Hour-time.Second))
		},
		"another type in the header": func(m *deliveryevents.SNSMessage) *deliveryevents.Request {
			req := snsPost(m, sns, now)
			req.Header.Set(deliveryevents.SNSMessageTypeHeader, deliveryevents.SNSSubscriptionConfirmation)
			return req
		},
		"no fetcher": func(m *deliveryevents.SNSMessage) *deliveryevents.Request {
			return snsPost(m, nil, now)
		},
	}
	for name, change := range changed {
		refused[name] = func(m *deliveryevents.SNSMessage) *deliveryevents.Request {
			change(m)
			return snsPost(m, sns, now)
		}
	}
	for name, post := range refused {
		m := snsfake.Notification(snsfake.TopicArn, "n-"+name, sesDelivery("ses-1", ""), now)
		require.ErrorIs(t, deliveryevents.Authenticate("ses", post(m), deliveryevents.Secrets{}), deliveryevents.ErrUnauthorized, name)
	}
	m := snsfake.Notification(snsfake.TopicArn, "n", sesDelivery("ses-1", ""), now)
	require.NoError(t, deliveryevents.Authenticate("ses", snsPost(m, sns, now.Add(59*time.Minute)), deliveryevents.Secrets{}), "within the hour")
	require.ErrorIs(t, deliveryevents.Authenticate("ses", snsPost(m, sns, now), deliveryevents.Secrets{Key: snsfake.TopicArn + "-other"}),
		deliveryevents.ErrUnauthorized, "another topic's post")
	other2 := snsfake.Notification("arn:aws:sns:us-east-1:999999999999:evil", "n", sesDelivery("ses-1", ""), now)
	require.ErrorIs(t, deliveryevents.Authenticate("ses", snsPost(other2, sns, now), deliveryevents.Secrets{Key: snsfake.TopicArn}),
		deliveryevents.ErrUnauthorized, "another topic's post, signed by SNS")
	for _, body := range []string{"", "[]", "null", `{"Type":1}`, "Type=Notification"} {
		req := &deliveryevents.Request{Header: http.Header{}, Body: []byte(body), Now: now, SNS: sns}
		require.ErrorIs(t, deliveryevents.Authenticate("ses", req, deliveryevents.Secrets{}), deliveryevents.ErrUnauthorized, body)
	}
	require.Equal(t, 1, fake.Fetches())
}

// A SigningCertURL that is not SNS's own is refused before any request.
func TestSESCertificateURL(t *testing.T) {
	t.Parallel()
	fake := snsfake.New()
	sns := fake.SNS()
	now := time.Now()
	for _, u := range []string{
		"http://sns.us-east-1.amazonaws.com/SimpleNotificationService-a.pem",
		"https://sns.us-east-1.amazonaws.com.evil.test/SimpleNotificationService-a.pem",
		"https://evil.test/SimpleNotificationService-a.pem",
		"https://sqs.us-east-1.amazonaws.com/SimpleNotificationService-a.pem",
		"https://sns.amazonaws.com/SimpleNotificationService-a.pem",
		"https://sns.us-east-1.amazonaws.com/SimpleNotificationService-a.txt",
		"https://sns.us-east-1.amazonaws.com/SimpleNotificationService-a.pem?x=1",
		"https://sns.us-east-1.amazonaws.com:8443/SimpleNotificationService-a.pem",
		"https://user:pw@sns.us-east-1.amazonaws.com/SimpleNotificationService-a.pem",
		"https://127.0.0.1/SimpleNotificationService-a.pem",
		"https://SNS.US-EAST-1.AMAZONAWS.COM/SimpleNotificationService-a.pem",
		"/SimpleNotificationService-a.pem", "", "https://sns.us-east-1.amazonaws.com/" + strings.Repeat("a", 3000) + ".pem",
	} {
		m := &deliveryevents.SNSMessage{Type: deliveryevents.SNSNotification, MessageID: "n", TopicArn: snsfake.TopicArn,
			Message: sesDelivery("ses-1", ""), Timestamp: now.UTC().Format(time.RFC3339Nano), SigningCertURL: u}
		snsfake.Sign(m)
		m.SigningCertURL = u // not signed
		require.ErrorIs(t, deliveryevents.Authenticate("ses", snsPost(m, sns, now), deliveryevents.Secrets{}), deliveryevents.ErrUnauthorized, u)
	}
	require.Empty(t, fake.Requests(), "no URL but SNS's is requested")
	for _, u := range []string{"https://sns.eu-west-3.amazonaws.com/SimpleNotificationService-b.pem",
		"https://sns.cn-north-1.amazonaws.com.cn/SimpleNotificationService-b.pem", "https://sns.us-east-1.amazonaws.com:443/x/y.pem"} {
		require.NoError(t, deliveryevents.SNSURL(u, true), u)
	}
	require.NoError(t, deliveryevents.SNSURL("https://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription&Token=t", false))
	require.Error(t, deliveryevents.SNSURL("https://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription&Token=t", true))

	// SNS's host without a certificate there: refused (a 404); nothing kept.
	m := &deliveryevents.SNSMessage{Type: deliveryevents.SNSNotification, MessageID: "n", TopicArn: snsfake.TopicArn,
		Message: "{}", Timestamp: now.UTC().Format(time.RFC3339Nano), SigningCertURL: "https://sns.us-east-1.amazonaws.com/none.pem"}
	snsfake.Sign(m)
	err := deliveryevents.Authenticate("ses", snsPost(m, sns, now), deliveryevents.Secrets{})
	require.ErrorIs(t, err, deliveryevents.ErrUnauthorized)
	require.NotErrorIs(t, err, deliveryevents.ErrUnavailable)
}

// roundTrip is an http.RoundTripper of a function.
type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// A certificate that cannot be had now is ErrUnavailable (the route's 503,
// which SNS retries); one that is no certificate, or too large, is
// ErrUnauthorized.
func TestSESCertificateFetch(t *testing.T) {
	t.Parallel()
	now := time.Now()
	m := snsfake.Notification(snsfake.TopicArn, "n", sesDelivery("ses-1", ""), now)
	verify := func(rt http.RoundTripper) error {
		sns := deliveryevents.NewSNS(deliveryevents.SNSOptions{Transport: rt, Timeout: time.Second})
		return deliveryevents.Authenticate("ses", snsPost(m, sns, now), deliveryevents.Secrets{})
	}
	body := func(status int, b string) roundTrip {
		return func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: status, Header: http.Header{}, Body: readCloser(b), Request: r, ContentLength: int64(len(b))}, nil
		}
	}
	require.ErrorIs(t, verify(roundTrip(func(*http.Request) (*http.Response, error) { return nil, errors.New("connection reset") })),
		deliveryevents.ErrUnavailable)
	require.ErrorIs(t, verify(body(http.StatusServiceUnavailable, "")), deliveryevents.ErrUnavailable)
	for name, rt := range map[string]roundTrip{
		"a 403":         body(http.StatusForbidden, "<Error/>"),
		"a redirect":    body(http.StatusFound, ""),
		"not PEM":       body(http.StatusOK, "hello"),
		"PEM, not X509": body(http.StatusOK, "-----BEGIN CERTIFICATE-----\naGVsbG8=\n-----END CERTIFICATE-----\n"),
		"too large":     body(http.StatusOK, strings.Repeat("A", 65<<10)),
	} {
		err := verify(rt)
		require.ErrorIs(t, err, deliveryevents.ErrUnauthorized, name)
		require.NotErrorIs(t, err, deliveryevents.ErrUnavailable, name)
	}

	// The real transport: the guard refuses SNS's host resolving to a
	// private or loopback address before any connection is made.
	for _, addr := range []string{"127.0.0.1", "10.0.0.7", "169.254.169.254"} {
		var dialed atomic.Bool
		sns := deliveryevents.NewSNS(deliveryevents.SNSOptions{Dialer: &netguard.Dialer{
			Resolve: func(context.Context, string) ([]netip.Addr, error) {
				return []netip.Addr{netip.MustParseAddr(addr)}, nil
			},
			Dial: func(context.Context, string, string) (net.Conn, error) {
				dialed.Store(true)
				return nil, errors.New("no connection may be made")
			}}})
		err := deliveryevents.Authenticate("ses", snsPost(m, sns, now), deliveryevents.Secrets{})
		require.ErrorIs(t, err, deliveryevents.ErrUnavailable, addr)
		require.ErrorIs(t, err, netguard.ErrRefused, addr)
		require.False(t, dialed.Load(), addr)
		require.ErrorIs(t, sns.Confirm(t.Context(), "https://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription&Token=t"),
			netguard.ErrRefused, addr)
		require.False(t, dialed.Load(), addr)
	}
}

type stringBody struct{ *strings.Reader }

func (stringBody) Close() error { return nil }

func readCloser(s string) stringBody { return stringBody{strings.NewReader(s)} }

// Confirm GETs the SubscribeURL, SNS's only.
func TestSNSConfirm(t *testing.T) {
	t.Parallel()
	fake := snsfake.New()
	sns := fake.SNS()
	c := snsfake.SubscriptionConfirmation(snsfake.TopicArn, "tok", time.Now())
	require.NoError(t, sns.Confirm(t.Context(), c.SubscribeURL))
	require.Equal(t, []string{c.SubscribeURL}, fake.Confirmed())
	for _, u := range []string{"http://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription", "https://evil.test/?Action=ConfirmSubscription",
		"https://sns.us-east-1.amazonaws.com.evil.test/"} {
		require.ErrorIs(t, sns.Confirm(t.Context(), u), deliveryevents.ErrUnavailable, u)
	}
	require.ErrorIs(t, sns.Confirm(t.Context(), "https://sns.us-east-1.amazonaws.com/?Action=Other"), deliveryevents.ErrUnavailable,
		"SNS's 404")
	require.Len(t, fake.Requests(), 2, "the URLs not SNS's were never requested")
}

// sesParse parses an SNS post of the SES event message.
func sesParse(t *testing.T, message string) deliveryevents.Batch {
	t.Helper()
	m := snsfake.Notification(snsfake.TopicArn, "sns-1", message, received)
	return parse(t, "ses", nil, string(snsfake.Body(m)))
}

func TestSESStatuses(t *testing.T) {
	t.Parallel()
	mail := `"mail":{"messageId":"ses-1","timestamp":"2031-03-14T15:00:00.000Z"}`
	for typ, want := range map[string]string{
		`"Send","send":{}`: "sent", `"Delivery"`: "delivered", `"Open","open":{}`: "opened", `"Click","click":{"link":"https://x"}`: "clicked",
		`"Bounce","bounce":{"bounceType":"Permanent","bounceSubType":"General"}`:         "bounced",
		`"Bounce","bounce":{"bounceType":"Undetermined","bounceSubType":"Undetermined"}`: "bounced",
		`"Bounce","bounce":{"bounceType":"Transient","bounceSubType":"MailboxFull"}`:     "deferred",
		`"Bounce","bounce":{"bounceType":"Other"}`:                                       "", `"Bounce"`: "",
		`"Complaint","complaint":{"complaintFeedbackType":"abuse"}`:                                        "spam",
		`"Reject","reject":{"reason":"Bad content"}`:                                                       "dropped",
		`"DeliveryDelay","deliveryDelay":{"delayType":"MailboxFull"}`:                                      "deferred",
		`"Rendering Failure","failure":{"errorMessage":"Attribute 'x' is not present","templateName":"t"}`: "failed",
		`"Subscription"`: "", `"AmazonSnsSubscriptionSucceeded"`: "", `"delivery"`: "", `""`: "", `1`: "",
	} {
		for _, field := range []string{"eventType", "notificationType"} {
			b := sesParse(t, `{"`+field+`":`+typ+`,`+mail+`}`)
			if want == "" {
				require.Empty(t, b.Events, typ)
				require.Equal(t, 1, b.Ignored, typ)
				continue
			}
			require.Len(t, b.Events, 1, typ)
			require.Equal(t, want, b.Events[0].Status, "%s %s", field, typ)
			require.Equal(t, "ses-1", b.Events[0].ProviderMessageID)
			require.Equal(t, "sns-1", b.Events[0].Key, "the SNS MessageId is the event's identity")
		}
	}
	for _, msg := range []string{"a message published by hand", `[1,2]`, `"x"`, `{"eventType":"Delivery"`, ""} {
		b := sesParse(t, msg)
		require.Empty(t, b.Events, msg)
		require.Equal(t, 1, b.Ignored, msg)
	}
}

func TestSESEvent(t *testing.T) {
	t.Parallel()
	b := sesParse(t, sesDelivery("0100018e-ses-1", "65f1a2b3c4d5e6f708192a3b"))
	require.Len(t, b.Events, 1)
	e := b.Events[0]
	require.Equal(t, "delivered", e.Status)
	require.Equal(t, "65f1a2b3c4d5e6f708192a3b", e.MessageID, "matched by Herald's tag")
	require.Equal(t, "0100018e-ses-1", e.ProviderMessageID)
	require.Equal(t, time.Date(2031, 3, 14, 15, 9, 26, 535e6, time.UTC), e.OccurredAt, "delivery.timestamp")
	require.Equal(t, sesDelivery("0100018e-ses-1", "65f1a2b3c4d5e6f708192a3b"), e.Raw, "raw is the SES event")
	require.Equal(t, "Delivery event from Amazon SES: delivered (250 2.6.0 Message received)", e.Detail)

	// Without the tag (notifications carry none): matched by SES's message id.
	b = sesParse(t, sesDelivery("0100018e-ses-2", ""))
	require.Empty(t, b.Events[0].MessageID)
	require.Equal(t, "0100018e-ses-2", b.Events[0].ProviderMessageID)

	// A bounce's reason; times from its object, else the mail's, else the receipt.
	b = sesParse(t, `{"notificationType":"Bounce","bounce":{"bounceType":"Permanent","bounceSubType":"General","timestamp":"2031-03-14T15:09:30Z",`+
		`"bouncedRecipients":[{"emailAddress":"ada@example.com","diagnosticCode":"smtp; 550 5.1.1 user unknown"}]},"mail":{"messageId":"m"}}`)
	require.Equal(t, "bounced", b.Events[0].Status)
	require.Equal(t, "Delivery event from Amazon SES: bounced (smtp; 550 5.1.1 user unknown)", b.Events[0].Detail)
	require.Equal(t, time.Date(2031, 3, 14, 15, 9, 30, 0, time.UTC), b.Events[0].OccurredAt)
	b = sesParse(t, `{"eventType":"Reject","reject":{"reason":"Bad content"},"mail":{"messageId":"m","timestamp":"2031-03-14T15:00:00Z"}}`)
	require.Equal(t, time.Date(2031, 3, 14, 15, 0, 0, 0, time.UTC), b.Events[0].OccurredAt)
	b = sesParse(t, `{"eventType":"Open","mail":{"messageId":"m"}}`)
	require.Equal(t, received, b.Events[0].OccurredAt)

	// Values of other types are read as none, never failing the event.
	b = sesParse(t, `{"eventType":"Delivery","mail":{"messageId":"m","tags":{"heraldMessageId":"h"},"timestamp":7},"delivery":[],"bounce":"x"}`)
	require.Len(t, b.Events, 1)
	require.Equal(t, "h", b.Events[0].MessageID)
	b = sesParse(t, `{"eventType":"Delivery","mail":{"messageId":{"x":1},"tags":{"heraldMessageId":[{}]}}}`)
	require.Len(t, b.Events, 1)
	require.Empty(t, b.Events[0].MessageID)
	require.Empty(t, b.Events[0].ProviderMessageID)

	// The confirmations.
	c := snsfake.SubscriptionConfirmation(snsfake.TopicArn, "tok", received)
	b = parse(t, "ses", nil, string(snsfake.Body(c)))
	require.Equal(t, c.SubscribeURL, b.Confirm)
	require.Empty(t, b.Events)
	c.SubscribeURL = "https://evil.test/?Action=ConfirmSubscription"
	_, err := deliveryevents.Parse("ses", &deliveryevents.Request{Body: snsfake.Body(c), Now: received})
	require.ErrorIs(t, err, deliveryevents.ErrMalformed, "a SubscribeURL not SNS's is never confirmed")
	c.Type = deliveryevents.SNSUnsubscribeConfirmation
	b = parse(t, "ses", nil, string(snsfake.Body(c)))
	require.Equal(t, deliveryevents.Batch{}, b)
	_, err = deliveryevents.Parse("ses", &deliveryevents.Request{Body: []byte("[]"), Now: received})
	require.ErrorIs(t, err, deliveryevents.ErrMalformed)

	// Each SNS message is one event: its MessageId, else its content.
	m := snsfake.Notification(snsfake.TopicArn, "", sesDelivery("x", ""), received)
	b = parse(t, "ses", nil, string(snsfake.Body(m)))
	require.True(t, strings.HasPrefix(b.Events[0].Key, "sha256:"))
	var raw map[string]any
	require.NoError(t, json.Unmarshal([]byte(b.Events[0].Raw), &raw))
	require.Equal(t, "Delivery", raw["eventType"], fmt.Sprint(raw))
}
