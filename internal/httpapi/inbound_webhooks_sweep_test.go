package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// inboundSweepFixtures makes what the bad-input sweep posts delivery events
// to: a SendGrid integration of the development environment that takes its
// events unsigned (so every bad body reaches the parser).
func inboundSweepFixtures(t *testing.T, h *harness, vars map[string]string) {
	vars["environmentId"], _ = h.envIDs(t)
	in := h.createIntegration(t, h.authFor(asDev), map[string]any{"providerId": "sendgrid", "identifier": "sw-inbound",
		"configurations": map[string]any{"inboundWebhookEnabled": true}})
	vars["inboundIntegration"] = in["_id"].(string)
}

// TestInboundBadInput: every provider's parser, reached through the route
// with bodies that are not its payload — garbage, other providers' bodies,
// JSON of every wrong shape, deep and huge ones, wrong content types —
// answers a 4xx or a 200, never a 5xx, each as the OpenAPI document says.
func TestInboundBadInput(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		envID, _ := h.envIDs(t)
		targets := map[string]string{}
		for _, p := range []string{"sendgrid", "mailgun", "resend", "postmark", "twilio", "ses"} {
			// Unsigned, so that the bodies reach the parsers (Twilio's and SES's always want their signatures).
			in := h.createIntegration(t, dev, map[string]any{"providerId": p, "identifier": "bad-" + p,
				"credentials":    map[string]any{"token": "t", "accountSid": "AC1", "from": "+1555"},
				"configurations": map[string]any{"inboundWebhookEnabled": true}})
			targets[p] = inboundPath(envID, in["_id"].(string))
		}
		deep := strings.Repeat("[", 10_000) + strings.Repeat("]", 10_000)
		wide := "[" + strings.TrimSuffix(strings.Repeat(`{"event":"open","sg_event_id":"w"},`, 10_001), ",") + "]"
		bodies := map[string]string{
			"empty": "", "space": " ", "null": "null", "number": "1e400", "string": `"x"`, "true": "true",
			"object": `{}`, "array": `[]`, "array of nulls": `[null,null]`, "array of arrays": `[[],[[]]]`,
			"nested objects": `{"event-data":{"event-data":{}},"signature":[],"data":1,"type":{}}`,
			"types wrong":    `[{"event":1,"sg_event_id":{},"timestamp":"x","heraldMessageId":[]}]`,
			"mailgun types":  `{"signature":"x","event-data":{"event":"failed","severity":7,"message":{"headers":[]},"user-variables":"x"}}`,
			"resend types":   `{"type":"email.delivered","created_at":12,"data":[]}`,
			"postmark types": `{"RecordType":"Delivery","DeliveredAt":{},"Metadata":[],"MessageID":null}`,
			"sns types":      `{"Type":"Notification","MessageId":1,"Message":{},"Timestamp":[],"SignatureVersion":2,"Signature":null}`,
			"sns unsigned": `{"Type":"Notification","MessageId":"m","TopicArn":"arn:aws:sns:us-east-1:1:t","Message":"{\"eventType\":\"Delivery\"}",` +
				`"Timestamp":"2031-03-14T15:09:26Z","SignatureVersion":"2","Signature":"AAAA","SigningCertURL":"https://evil.test/x.pem"}`,
			"sns confirmation": `{"Type":"SubscriptionConfirmation","SubscribeURL":"https://169.254.169.254/latest/meta-data/","Token":"t"}`,
			"deep":             deep, "deep object": strings.Repeat(`{"a":`, 100) + "1" + strings.Repeat("}", 100),
			"wide": wide, "form": "MessageSid=SM1&MessageStatus=delivered", "bad form": "%zz=%", "binary": "\xff\xfe\x00\x01",
			"nul escape": `[{"event":"delivered","sg_event_id":"\u0000"}]`, "surrogate": `{"type":"email.sent","data":{"email_id":"\ud800"}}`,
			"huge number": `[{"event":"delivered","timestamp":1e308}]`, "long id": `[{"event":"delivered","sg_event_id":"` + strings.Repeat("x", 100_000) + `"}]`,
		}
		contentTypes := []string{"application/json", "application/x-www-form-urlencoded", "text/plain", "multipart/form-data; boundary=x", ""}
		for p, target := range targets {
			for name, body := range bodies {
				for _, ct := range contentTypes {
					res := h.call(t, "", "POST", target, []byte(body), map[string]string{"Content-Type": ct})
					require.Less(t, res.Status, 500, "%s %s (%s): %s", p, name, ct, res.Raw)
					if res.Status >= 400 {
						require.Contains(t, []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusUnprocessableEntity}, res.Status,
							"%s %s (%s): %s", p, name, ct, res.Raw)
					}
				}
			}
		}
		require.Equal(t, 200, h.call(t, "", "GET", "/health", nil, nil).Status)
		require.Empty(t, h.SNS.Requests(), "no unsigned SES post has Herald request anything")
	})
}
