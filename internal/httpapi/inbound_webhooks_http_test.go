package httpapi_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/deliveryevents"
	"github.com/herald-notify/herald/internal/deliveryevents/snsfake"
	"github.com/herald-notify/herald/internal/provider"
	"github.com/herald-notify/herald/internal/provider/email/mailgun/mailgunfake"
	"github.com/herald-notify/herald/internal/provider/email/postmark/postmarkfake"
	"github.com/herald-notify/herald/internal/provider/email/resend/resendfake"
	"github.com/herald-notify/herald/internal/provider/email/sendgrid/sendgridfake"
	"github.com/herald-notify/herald/internal/provider/email/ses/sesfake"
	"github.com/herald-notify/herald/internal/provider/sms/twilio/twiliofake"
	"github.com/herald-notify/herald/internal/webhooks"
)

// inboundPath is the route of an integration's delivery events.
func inboundPath(envID, integrationID string) string {
	return "/v2/inbound-webhooks/delivery-providers/" + envID + "/" + integrationID
}

// signer signs posts to an integration as its provider does.
type signer struct {
	provider string
	key      string            // configurations.inboundWebhookSigningKey ("" for Twilio; SES: the topic's ARN)
	ecdsa    *ecdsa.PrivateKey // SendGrid's
	token    string            // Twilio's auth token
}

func newSigner(t *testing.T, providerID string, creds provider.Credentials) *signer {
	s := &signer{provider: providerID}
	switch providerID {
	case "sendgrid":
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		require.NoError(t, err)
		der, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
		require.NoError(t, err)
		s.ecdsa, s.key = k, base64.StdEncoding.EncodeToString(der)
	case "mailgun":
		s.key = "mailgun-signing-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	case "resend":
		b := make([]byte, 24)
		_, _ = rand.Read(b)
		s.key = "whsec_" + base64.StdEncoding.EncodeToString(b)
	case "postmark":
		s.key = "herald:" + strconv.FormatInt(time.Now().UnixNano(), 36)
	case "twilio":
		s.token, _ = creds["token"].(string)
	case "ses":
		s.key = snsfake.TopicArn
	}
	return s
}

// sign returns the body and headers of a signed post of body to target;
// mailgun's body is the event-data object, wrapped in its signed envelope;
// SES's the SES event, the Message of a signed SNS Notification whose
// MessageId is id.
func (s *signer) sign(t *testing.T, target string, body []byte, id string) ([]byte, map[string]string) {
	t.Helper()
	switch s.provider {
	case "sendgrid":
		ts := strconv.FormatInt(time.Now().Unix(), 10)
		sum := sha256.Sum256(append([]byte(ts), body...))
		sig, err := ecdsa.SignASN1(rand.Reader, s.ecdsa, sum[:])
		require.NoError(t, err)
		return body, map[string]string{deliveryevents.SendGridSignatureHeader: base64.StdEncoding.EncodeToString(sig),
			deliveryevents.SendGridTimestampHeader: ts}
	case "mailgun":
		ts, token := strconv.FormatInt(time.Now().Unix(), 10), "token-"+id
		mac := hmac.New(sha256.New, []byte(s.key))
		mac.Write([]byte(ts + token))
		out, err := json.Marshal(map[string]any{"signature": map[string]string{"timestamp": ts, "token": token,
			"signature": hex.EncodeToString(mac.Sum(nil))}, "event-data": json.RawMessage(body)})
		require.NoError(t, err)
		return out, nil
	case "resend":
		ts := strconv.FormatInt(time.Now().Unix(), 10)
		sig, err := deliveryevents.SvixSign(s.key, id, ts, body)
		require.NoError(t, err)
		return body, map[string]string{deliveryevents.SvixIDHeader: id, deliveryevents.SvixTimestampHeader: ts,
			deliveryevents.SvixSignatureHeader: sig}
	case "postmark":
		return body, map[string]string{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte(s.key))}
	case "ses":
		return snsfake.Body(snsfake.Notification(s.key, id, string(body), time.Now())),
			map[string]string{deliveryevents.SNSMessageTypeHeader: deliveryevents.SNSNotification, "Content-Type": "text/plain; charset=UTF-8"}
	case "twilio":
		form, err := url.ParseQuery(string(body))
		require.NoError(t, err)
		return body, map[string]string{deliveryevents.TwilioSignatureHeader: deliveryevents.TwilioSign(s.token, "http://example.com"+target, form),
			"Content-Type": "application/x-www-form-urlencoded"}
	}
	t.Fatalf("no signer for %s", s.provider)
	return nil, nil
}

// post sends a signed post of body (id: the event's identity where the
// provider signs one) to the integration.
func (h *harness) postInbound(t *testing.T, s *signer, target string, body []byte, id string) response {
	t.Helper()
	b, headers := s.sign(t, target, body, id)
	return h.call(t, "", "POST", target, b, headers)
}

// inboundFixture is a message a provider delivered, and its integration
// taking the provider's signed events.
type inboundFixture struct {
	envID, integrationID                   string
	messageID, providerMessageID, notifyID string
	signer                                 *signer
	target                                 string
	channel                                string
}

// deliverThrough sends one message through a fake of providerID (e-mail,
// or SMS for Twilio) from an integration taking its delivery events.
func (h *harness) deliverThrough(t *testing.T, providerID string) inboundFixture {
	t.Helper()
	dev := h.authFor(asDev)
	var creds provider.Credentials
	channel := "email"
	switch providerID {
	case "sendgrid":
		f := sendgridfake.New()
		t.Cleanup(f.Close)
		creds = f.Credentials()
	case "mailgun":
		f := mailgunfake.New()
		t.Cleanup(f.Close)
		creds = f.Credentials()
	case "resend":
		f := resendfake.New()
		t.Cleanup(f.Close)
		creds = f.Credentials()
	case "postmark":
		f := postmarkfake.New()
		t.Cleanup(f.Close)
		creds = f.Credentials()
	case "twilio":
		f := twiliofake.New()
		t.Cleanup(f.Close)
		creds, channel = f.Credentials(), "sms"
	case "ses":
		f := sesfake.New()
		t.Cleanup(f.Close)
		creds = f.Credentials()
	}
	s := newSigner(t, providerID, creds)
	confs := map[string]any{"inboundWebhookEnabled": true}
	if s.key != "" {
		confs["inboundWebhookSigningKey"] = s.key
	}
	in := h.createIntegration(t, dev, map[string]any{"providerId": providerID, "identifier": providerID + "-main", "active": true,
		"credentials": map[string]any(creds), "configurations": confs})
	h.createWorkflow(t, dev, map[string]any{"name": "Note", "workflowId": "note", "steps": []any{
		map[string]any{"name": "Note", "type": channel, "controlValues": map[string]any{"subject": "Hi", "body": "Hello {{subscriber.firstName}}"}}}})
	h.createSubscriber(t, dev, map[string]any{"subscriberId": "ada", "firstName": "Ada", "email": "ada@example.com", "phone": "+15550100"})
	h.trigger(t, dev, map[string]any{"name": "note", "to": "ada", "transactionId": "tx-note"})
	drain(t, h.deliveryEngine(&testClock{t: time.Now().Add(time.Minute)}))
	msgs := objects(t, h.messages(t, url.Values{"channel": {channel}, "transactionId": {"tx-note"}})["data"])
	require.Len(t, msgs, 1)
	require.Equal(t, "sent", msgs[0]["status"])
	require.NotEmpty(t, msgs[0]["providerMessageId"])
	envID, _ := h.envIDs(t)
	return inboundFixture{envID: envID, integrationID: in["_id"].(string), messageID: msgs[0]["_id"].(string),
		providerMessageID: msgs[0]["providerMessageId"].(string), notifyID: msgs[0]["_notificationId"].(string), signer: s,
		target: inboundPath(envID, in["_id"].(string)), channel: channel}
}

// webhookDetails are the details of the fixture's delivery job with source Webhook.
func (h *harness) webhookDetails(t *testing.T, notificationID string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, job := range objects(t, h.event(t, notificationID)["jobs"]) {
		for _, d := range objects(t, job["executionDetails"]) {
			if d["source"] == "Webhook" {
				out = append(out, d)
			}
		}
	}
	return out
}

// awaitDetails waits, at most the 5 s an event may take to be recorded,
// until the notification has n details of source Webhook.
func (h *harness) awaitDetails(t *testing.T, notificationID string, n int) []map[string]any {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		d := h.webhookDetails(t, notificationID)
		if len(d) >= n || time.Now().After(deadline) {
			require.Len(t, d, n, "the events recorded within 5 s")
			return d
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// deliveredEvent is the provider's `delivered` event of the fixture's
// message, matched as the provider's events are (by Herald's id where the
// provider carries it), at the time at; other is another status, matched
// by the provider's message id.
func (f inboundFixture) event(id, status string, byHeraldID bool, at time.Time) []byte {
	var v any
	heraldID := ""
	if byHeraldID {
		heraldID = f.messageID
	}
	switch f.signer.provider {
	case "sendgrid":
		sg := map[string]any{"email": "ada@example.com", "timestamp": at.Unix(), "event": map[string]string{"delivered": "delivered",
			"opened": "open", "bounced": "bounce"}[status], "sg_event_id": id, "sg_message_id": f.providerMessageID + ".filter0001.16648.5515E0B88.0"}
		if heraldID != "" {
			sg["heraldMessageId"] = heraldID
		}
		v = []any{sg}
	case "mailgun":
		ev := map[string]any{"id": id, "event": status, "timestamp": float64(at.UnixMilli()) / 1000,
			"message": map[string]any{"headers": map[string]any{"message-id": f.providerMessageID[1 : len(f.providerMessageID)-1]}}}
		if status == "bounced" {
			ev["event"], ev["severity"] = "failed", "permanent"
		}
		if heraldID != "" {
			ev["user-variables"] = map[string]any{"heraldMessageId": heraldID}
		}
		v = ev
	case "resend":
		v = map[string]any{"type": "email." + map[string]string{"delivered": "delivered", "opened": "opened", "bounced": "bounced"}[status],
			"created_at": at.UTC().Format("2006-01-02T15:04:05.000Z"), "data": map[string]any{"email_id": f.providerMessageID, "id": id}}
	case "postmark":
		pm := map[string]any{"RecordType": map[string]string{"delivered": "Delivery", "opened": "Open", "bounced": "Bounce"}[status],
			"MessageID": f.providerMessageID, "DeliveredAt": at.UTC().Format(time.RFC3339Nano), "ReceivedAt": at.UTC().Format(time.RFC3339Nano),
			"Details": id}
		if heraldID != "" {
			pm["Metadata"] = map[string]any{"heraldMessageId": heraldID}
		}
		v = pm
	case "ses":
		when := at.UTC().Format("2006-01-02T15:04:05.000Z")
		tags := map[string]any{"ses:configuration-set": []string{"herald"}}
		if heraldID != "" {
			tags["heraldMessageId"] = []string{heraldID}
		}
		ev := map[string]any{"eventType": map[string]string{"delivered": "Delivery", "opened": "Open", "bounced": "Bounce"}[status],
			"mail": map[string]any{"timestamp": when, "messageId": f.providerMessageID, "source": "noreply@herald.test", "tags": tags,
				"destination": []string{"ada@example.com"}}}
		switch status {
		case "delivered":
			ev["delivery"] = map[string]any{"timestamp": when, "smtpResponse": "250 2.6.0 " + id, "recipients": []string{"ada@example.com"}}
		case "opened":
			ev["open"] = map[string]any{"timestamp": when, "ipAddress": "192.0.2.1"}
		case "bounced":
			ev["bounce"] = map[string]any{"bounceType": "Permanent", "bounceSubType": "General", "timestamp": when,
				"bouncedRecipients": []any{map[string]any{"emailAddress": "ada@example.com", "diagnosticCode": "smtp; 550 " + id}}}
		}
		v = ev
	case "twilio":
		return []byte(url.Values{"MessageSid": {f.providerMessageID}, "MessageStatus": {map[string]string{"delivered": "delivered",
			"opened": "read", "bounced": "undelivered"}[status]}, "AccountSid": {"AC" + id}}.Encode())
	}
	b, _ := json.Marshal(v)
	return b
}

// TestInboundDeliveryEvents: each provider's events, signed as it signs
// them, recorded on the message they name (both ways of matching where the
// provider has two), once however often posted, with deliveredAt.
func TestInboundDeliveryEvents(t *testing.T) {
	t.Parallel()
	for _, providerID := range []string{"sendgrid", "mailgun", "resend", "postmark", "twilio", "ses"} {
		t.Run(providerID, func(t *testing.T) {
			t.Parallel()
			forEachStore(t, func(t *testing.T, h *harness) {
				f := h.deliverThrough(t, providerID)
				byHeraldID := providerID == "sendgrid" || providerID == "mailgun" || providerID == "postmark" || providerID == "ses"
				at := time.Now().Add(-time.Minute).Truncate(time.Second)
				delivered := f.event("ev-delivered", "delivered", byHeraldID, at)
				res := h.postInbound(t, f.signer, f.target, delivered, "msg_delivered")
				require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
				require.Equal(t, map[string]any{"received": 1.0, "queued": 1.0, "duplicates": 0.0, "ignored": 0.0}, res.Object(t))

				d := h.awaitDetails(t, f.notifyID, 1)[0]
				require.Equal(t, "Success", d["status"])
				require.Equal(t, "delivered", d["webhookStatus"])
				require.Equal(t, providerID, d["providerId"])
				require.Equal(t, false, d["isRetry"])
				require.Equal(t, false, d["isTest"])
				require.Contains(t, d["detail"], "delivered")
				require.NotEmpty(t, d["createdAt"])
				var raw any
				require.NoError(t, json.Unmarshal([]byte(d["raw"].(string)), &raw), "raw is the provider's event as a JSON string")
				require.IsType(t, map[string]any{}, raw)

				msgs := objects(t, h.messages(t, url.Values{"channel": {f.channel}, "transactionId": {"tx-note"}})["data"])
				if providerID == "twilio" {
					got, err := time.Parse(time.RFC3339, msgs[0]["deliveredAt"].([]any)[0].(string))
					require.NoError(t, err)
					require.WithinDuration(t, time.Now(), got, 10*time.Second, "Twilio's events are timed when received")
				} else {
					require.Equal(t, []any{at.UTC().Format("2006-01-02T15:04:05.000Z")}, msgs[0]["deliveredAt"],
						"deliveredAt is the provider's time of the event")
				}

				// Posted again: recorded once.
				res = h.postInbound(t, f.signer, f.target, delivered, "msg_delivered")
				require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
				require.Equal(t, 1.0, res.Object(t)["duplicates"])

				// Another event, matched by the provider's message id.
				res = h.postInbound(t, f.signer, f.target, f.event("ev-bounce", "bounced", false, at), "msg_bounce")
				require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
				got := h.awaitDetails(t, f.notifyID, 2)
				require.Equal(t, "Failed", got[1]["status"])
				require.Contains(t, []any{"bounced", "undelivered"}, got[1]["webhookStatus"])

				// Not signed as the provider signs: refused, nothing recorded.
				unsigned, _ := f.signer.sign(t, f.target, f.event("ev-open", "opened", false, at), "msg_open")
				switch providerID { // their signatures are in the body
				case "mailgun":
					var env map[string]map[string]any
					require.NoError(t, json.Unmarshal(unsigned, &env))
					env["signature"]["signature"] = strings.Repeat("0", 64)
					unsigned, _ = json.Marshal(env)
				case "ses":
					var m deliveryevents.SNSMessage
					require.NoError(t, json.Unmarshal(unsigned, &m))
					m.Signature = base64.StdEncoding.EncodeToString(make([]byte, 256))
					unsigned = snsfake.Body(&m)
				}
				res = h.call(t, "", "POST", f.target, unsigned, map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
				require.Equal(t, http.StatusUnauthorized, res.Status, "%s", res.Raw)
				time.Sleep(100 * time.Millisecond) // the recorder had its chance
				require.Len(t, h.webhookDetails(t, f.notifyID), 2)
			})
		})
	}
}

// inboundRows counts the events stored.
func (h *harness) inboundRows(t *testing.T) int {
	t.Helper()
	var n int
	require.NoError(t, h.DB.Reader().QueryRowContext(t.Context(), "SELECT count(*) FROM delivery_events").Scan(&n))
	return n
}

// TestInboundRefusals: 413, then 404, then 401, each recording nothing; an
// event of another environment's message, or of none, is skipped (200).
func TestInboundRefusals(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		f := h.deliverThrough(t, "sendgrid")
		devEnv, prodEnv := h.envIDs(t)
		body := f.event("ev-1", "delivered", true, time.Now())
		signed, headers := f.signer.sign(t, f.target, body, "")
		post := func(target string, b []byte, hd map[string]string) int {
			return h.call(t, "", "POST", target, b, hd).Status
		}
		huge := make([]byte, 1<<20+1)
		for i := range huge {
			huge[i] = ' '
		}
		require.Equal(t, http.StatusRequestEntityTooLarge, post(inboundPath("000000000000000000000000", f.integrationID), huge, nil),
			"413 comes first, even for no integration")
		require.Equal(t, http.StatusNotFound, post(inboundPath(prodEnv, f.integrationID), signed, headers), "another environment's integration")
		require.Equal(t, http.StatusNotFound, post(inboundPath(devEnv, "000000000000000000000000"), signed, headers))
		require.Equal(t, http.StatusNotFound, post(inboundPath("not-an-id", "nor-this"), signed, headers))
		require.Equal(t, http.StatusNotFound, post(inboundPath(prodEnv, f.integrationID), []byte("garbage"), nil),
			"404 before 401: an unsigned post to another environment")
		require.Equal(t, http.StatusUnauthorized, post(f.target, signed, nil), "a missing signature fails")
		wrong := map[string]string{deliveryevents.SendGridSignatureHeader: headers[deliveryevents.SendGridSignatureHeader],
			deliveryevents.SendGridTimestampHeader: "1"}
		require.Equal(t, http.StatusUnauthorized, post(f.target, signed, wrong), "the timestamp is signed")
		require.Equal(t, 0, h.inboundRows(t), "a refused post stores nothing")

		// A disabled integration, and a provider whose events Herald does not read.
		res := h.call(t, dev, "PUT", "/v1/integrations/"+f.integrationID, map[string]any{"configurations": map[string]any{
			"inboundWebhookEnabled": false, "inboundWebhookSigningKey": f.signer.key}}, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		require.Equal(t, http.StatusNotFound, post(f.target, signed, headers), "inboundWebhookEnabled false")
		smtp := h.createIntegration(t, dev, map[string]any{"providerId": "nodemailer", "identifier": "smtp", "configurations": map[string]any{
			"inboundWebhookEnabled": true}})
		require.Equal(t, http.StatusNotFound, post(inboundPath(devEnv, smtp["_id"].(string)), []byte("[]"), nil))
		require.Equal(t, 0, h.inboundRows(t))

		// Enabled again: a message of no environment's, and another environment's, are skipped.
		res = h.call(t, dev, "PUT", "/v1/integrations/"+f.integrationID, map[string]any{"configurations": map[string]any{
			"inboundWebhookEnabled": true, "inboundWebhookSigningKey": f.signer.key}}, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		require.Equal(t, http.StatusBadRequest, h.postInbound(t, f.signer, f.target, []byte(`{"event":"delivered"}`), "").Status,
			"a signed body that is not SendGrid's payload")
		other := fmt.Appendf(nil, `[{"event":"delivered","sg_event_id":"x1","heraldMessageId":"000000000000000000000000"},`+
			`{"event":"processed","sg_event_id":"x2","heraldMessageId":%q}]`, f.messageID)
		res = h.postInbound(t, f.signer, f.target, other, "")
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		require.Equal(t, map[string]any{"received": 2.0, "queued": 1.0, "duplicates": 0.0, "ignored": 1.0}, res.Object(t))
		time.Sleep(200 * time.Millisecond)
		require.Empty(t, h.webhookDetails(t, f.notifyID), "unmatched and ignored events record nothing")

		// A deleted integration takes nothing.
		require.Equal(t, http.StatusOK, h.call(t, dev, "DELETE", "/v1/integrations/"+f.integrationID, nil, nil).Status)
		rows := h.inboundRows(t)
		signed, headers = f.signer.sign(t, f.target, f.event("ev-2", "delivered", true, time.Now()), "")
		require.Equal(t, http.StatusNotFound, post(f.target, signed, headers), "a deleted integration")
		require.Equal(t, rows, h.inboundRows(t))
	})
}

// TestInboundTwilioURL: the URL Twilio signs is the one it posted to:
// https behind a proxy that says so, the Host header, the query as sent.
func TestInboundTwilioURL(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		f := h.deliverThrough(t, "twilio")
		body := f.event("1", "delivered", false, time.Now())
		form, err := url.ParseQuery(string(body))
		require.NoError(t, err)
		target := f.target + "?tenant=a%20b"
		sig := deliveryevents.TwilioSign(f.signer.token, "https://hooks.example.org"+target, form)
		req := newRequest(t, "", "POST", target, body, map[string]string{deliveryevents.TwilioSignatureHeader: sig,
			"Content-Type": "application/x-www-form-urlencoded", "X-Forwarded-Proto": "https"})
		req.Host = "hooks.example.org"
		res := h.serve(req)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		req = newRequest(t, "", "POST", target, body, map[string]string{deliveryevents.TwilioSignatureHeader: sig,
			"Content-Type": "application/x-www-form-urlencoded"})
		req.Host = "hooks.example.org"
		require.Equal(t, http.StatusUnauthorized, h.serve(req).Status, "without the proxy's word the URL is http")
		h.awaitDetails(t, f.notifyID, 1)
	})
}

// TestInboundDeliveredWebhook: a recorded `delivered` event sends
// message.delivered to the environment's endpoints, with deliveredAt.
func TestInboundDeliveredWebhook(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		f := h.deliverThrough(t, "postmark")
		res := h.call(t, h.authFor(asDev), "POST", "/v2/webhooks/endpoints", map[string]any{"url": "https://hooks.example.com/herald",
			"eventTypes": []string{"message.delivered"}}, nil)
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
		// The store writes the event's outbox entry with the record; the
		// service's drain (herald serve runs it) makes the event of it.
		svc := webhooks.New(webhooks.Options{Store: h.DB, Logger: testLogger(t)})
		svc.Outbox(h.DB)
		at := time.Date(2031, 3, 14, 15, 9, 26, 535e6, time.UTC)
		res = h.postInbound(t, f.signer, f.target, f.event("e", "delivered", true, at), "")
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		h.awaitDetails(t, f.notifyID, 1)
		var body string
		require.Eventually(t, func() bool {
			require.NoError(t, svc.Drain(t.Context()))
			return h.DB.Reader().QueryRowContext(t.Context(), "SELECT body FROM webhook_events WHERE event_type = 'message.delivered'").
				Scan(&body) == nil
		}, 5*time.Second, 20*time.Millisecond)
		var ev struct {
			Type string `json:"type"`
			Data struct {
				Object map[string]any `json:"object"`
			} `json:"data"`
		}
		require.NoError(t, json.Unmarshal([]byte(body), &ev))
		require.Equal(t, "message.delivered", ev.Type)
		require.Equal(t, f.messageID, ev.Data.Object["_id"])
		require.Equal(t, []any{"2031-03-14T15:09:26.535Z"}, ev.Data.Object["deliveredAt"])
		require.Equal(t, "ada", ev.Data.Object["subscriberId"])
	})
}

// TestInboundSES: SES's events come through SNS. An e-mail sent through
// SES, then SNS's signed Notification of its Delivery event, verified with
// the certificate SigningCertURL names (served from memory); a
// SubscriptionConfirmation is confirmed by a GET of its SubscribeURL; a
// post of another topic, a stale one, or one naming a certificate that is
// not SNS's is a 401 that requests nothing and stores nothing.
func TestInboundSES(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		f := h.deliverThrough(t, "ses")
		at := time.Now().Add(-time.Minute).Truncate(time.Millisecond)
		notify := func(m *deliveryevents.SNSMessage) response {
			return h.call(t, "", "POST", f.target, snsfake.Body(m), map[string]string{deliveryevents.SNSMessageTypeHeader: m.Type,
				"Content-Type": "text/plain; charset=UTF-8"})
		}

		// The subscription: confirmed, nothing recorded.
		c := snsfake.SubscriptionConfirmation(snsfake.TopicArn, "token-1", time.Now())
		res := notify(c)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		require.Equal(t, []string{c.SubscribeURL}, h.SNS.Confirmed())
		require.Equal(t, map[string]any{"received": 0.0, "queued": 0.0, "duplicates": 0.0, "ignored": 0.0}, res.Object(t))
		// SNS's refusal to confirm: a 503, so that SNS posts it again.
		bad := snsfake.SubscriptionConfirmation(snsfake.TopicArn, "token-2", time.Now())
		bad.SubscribeURL = "https://sns.us-east-1.amazonaws.com/?Action=Unknown&Token=token-2"
		snsfake.Sign(bad)
		res = notify(bad)
		require.Equal(t, http.StatusServiceUnavailable, res.Status, "%s", res.Raw)
		require.Len(t, h.SNS.Confirmed(), 1)
		u := &deliveryevents.SNSMessage{Type: deliveryevents.SNSUnsubscribeConfirmation, MessageID: "u1", Token: "token-3", TopicArn: snsfake.TopicArn,
			Message: "unsubscribed", SubscribeURL: c.SubscribeURL, Timestamp: time.Now().UTC().Format(time.RFC3339)}
		snsfake.Sign(u)
		require.Equal(t, http.StatusOK, notify(u).Status)
		require.Len(t, h.SNS.Confirmed(), 1, "an unsubscription is only acknowledged")
		require.Equal(t, 0, h.inboundRows(t))

		// Refused: another topic, stale, a certificate not SNS's, SHA1 signed as SHA256.
		message := string(f.event("ev", "delivered", true, at))
		other := snsfake.Notification("arn:aws:sns:us-east-1:999999999999:other", "n-other", message, time.Now())
		stale := snsfake.Notification(snsfake.TopicArn, "n-stale", message, time.Now().Add(-61*time.Minute))
		elsewhere := &deliveryevents.SNSMessage{Type: deliveryevents.SNSNotification, MessageID: "n-elsewhere", TopicArn: snsfake.TopicArn,
			Message: message, Timestamp: time.Now().UTC().Format(time.RFC3339), SigningCertURL: "https://certs.example.com/SimpleNotificationService-a.pem"}
		snsfake.Sign(elsewhere)
		relabeled := snsfake.Notification(snsfake.TopicArn, "n-relabeled", message, time.Now())
		relabeled.SignatureVersion = "1"
		requests := len(h.SNS.Requests())
		for name, m := range map[string]*deliveryevents.SNSMessage{"another topic": other, "stale": stale, "a certificate not SNS's": elsewhere,
			"another version": relabeled} {
			res := notify(m)
			require.Equal(t, http.StatusUnauthorized, res.Status, "%s: %s", name, res.Raw)
		}
		require.Len(t, h.SNS.Requests(), requests, "nothing requested for the refused posts")
		require.Equal(t, 0, h.inboundRows(t))

		// The Delivery event, signed with SignatureVersion 1.
		m := &deliveryevents.SNSMessage{Type: deliveryevents.SNSNotification, MessageID: "n-delivery", TopicArn: snsfake.TopicArn, Message: message,
			Timestamp: time.Now().UTC().Format(time.RFC3339Nano), SignatureVersion: "1"}
		snsfake.Sign(m)
		res = notify(m)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		require.Equal(t, map[string]any{"received": 1.0, "queued": 1.0, "duplicates": 0.0, "ignored": 0.0}, res.Object(t))
		d := h.awaitDetails(t, f.notifyID, 1)[0]
		require.Equal(t, "Webhook", d["source"])
		require.Equal(t, "delivered", d["webhookStatus"])
		require.Equal(t, "Success", d["status"])
		require.Equal(t, "ses", d["providerId"])
		require.Equal(t, "Delivery event from Amazon SES: delivered (250 2.6.0 ev)", d["detail"])
		require.JSONEq(t, message, d["raw"].(string), "raw is the SES event")
		msgs := objects(t, h.messages(t, url.Values{"channel": {"email"}, "transactionId": {"tx-note"}})["data"])
		require.Equal(t, []any{at.UTC().Format("2006-01-02T15:04:05.000Z")}, msgs[0]["deliveredAt"], "delivery.timestamp")

		// An SES event of a type Herald does not record, and a message published by hand: ignored.
		for i, msg := range []string{`{"eventType":"Subscription","mail":{"messageId":"x"}}`, "Hello from the console"} {
			res = notify(snsfake.Notification(snsfake.TopicArn, fmt.Sprintf("n-ignored-%d", i), msg, time.Now()))
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
			require.Equal(t, 1.0, res.Object(t)["ignored"])
		}
		require.Equal(t, 1, h.SNS.Fetches(), "the certificate is fetched once")
		require.Len(t, h.webhookDetails(t, f.notifyID), 1)
	})
}
