package httpapi_test

import (
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/provider/sms/twilio/twiliofake"
)

func TestSMSDelivery(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		f := twiliofake.New()
		defer f.Close()
		creds := map[string]any(f.Credentials())
		in := h.createIntegration(t, dev, map[string]any{"providerId": "twilio", "identifier": "texts", "active": true, "credentials": creds})
		h.createWorkflow(t, dev, map[string]any{"name": "Code", "workflowId": "code", "steps": []any{
			map[string]any{"name": "Text", "type": "sms", "controlValues": map[string]any{"body": "Your code is {{payload.code}}"}},
			map[string]any{"name": "Inbox", "type": "in_app", "controlValues": map[string]any{"body": "code sent"}},
		}})
		h.createSubscriber(t, dev, map[string]any{"subscriberId": "ada", "phone": "+15555550123"})
		h.createSubscriber(t, dev, map[string]any{"subscriberId": "nophone"})
		eng := h.deliveryEngine(&testClock{t: time.Now().Add(time.Minute)})

		h.trigger(t, dev, map[string]any{"name": "code", "to": "ada", "payload": map[string]any{"code": "4242"}, "transactionId": "tx-sms"})
		h.trigger(t, dev, map[string]any{"name": "code", "to": "nophone", "payload": map[string]any{"code": "1"}, "transactionId": "tx-nophone"})
		drain(t, eng)

		got := f.Received()
		require.Len(t, got, 1)
		require.Equal(t, []string{"+15555550123"}, got[0].To)
		require.Equal(t, "Your code is 4242", got[0].Content)
		require.Equal(t, "+15555550199", got[0].From)
		msgs := objects(t, h.messages(t, url.Values{"channel": {"sms"}, "transactionId": {"tx-sms"}})["data"])
		require.Len(t, msgs, 1)
		require.Equal(t, "sent", msgs[0]["status"])
		require.Equal(t, "+15555550123", msgs[0]["phone"])
		require.Equal(t, got[0].MessageID, msgs[0]["providerMessageId"])
		require.Equal(t, in["_id"], msgs[0]["_integrationId"])
		require.Equal(t, "Your code is 4242", msgs[0]["content"])

		jobs := h.jobsOf(t, "tx-nophone")
		require.Equal(t, "failed", jobs[0]["status"])
		require.Contains(t, detailTexts(t, jobs[0]), "Subscriber missing recipient details")
		require.Equal(t, "completed", jobs[1]["status"], "the workflow goes on")
	})
}
