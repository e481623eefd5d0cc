package httpapi_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/provider/providertest"
	"github.com/herald-notify/herald/internal/provider/push/expo/expofake"
	"github.com/herald-notify/herald/internal/provider/push/fcm/fcmfake"
)

func pushWorkflow(key string) map[string]any {
	return map[string]any{"name": "Push " + key, "workflowId": key, "steps": []any{
		map[string]any{"name": "Push", "type": "push", "controlValues": map[string]any{
			"subject": "New comment", "body": "{{payload.author}} replied", "data": map[string]any{"postId": "{{payload.post}}"}}},
	}}
}

// tokensOf are a subscriber's device tokens for a provider.
func (h *harness) tokensOf(t *testing.T, sid, providerID string) []any {
	t.Helper()
	for _, ch := range objects(t, h.getSubscriber(t, sid)["channels"]) {
		if ch["providerId"] == providerID {
			toks, _ := ch["credentials"].(map[string]any)["deviceTokens"].([]any)
			return toks
		}
	}
	return nil
}

func TestPushDelivery(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		fc, ex := fcmfake.New(), expofake.New()
		defer fc.Close()
		defer ex.Close()
		fcCreds := map[string]any(fc.Credentials())
		h.createIntegration(t, dev, map[string]any{"providerId": "fcm", "identifier": "fcm", "active": true, "credentials": fcCreds})
		exCreds := map[string]any(ex.Credentials())
		h.createIntegration(t, dev, map[string]any{"providerId": "expo", "identifier": "expo", "active": true, "credentials": exCreds})
		h.createWorkflow(t, dev, pushWorkflow("replied"))
		h.createSubscriber(t, dev, map[string]any{"subscriberId": "ada"})
		dead, live := fcmfake.Token(900), fcmfake.Token(901)
		credentialsOf(h, t, "ada", map[string]any{"providerId": "fcm", "credentials": map[string]any{"deviceTokens": []string{dead, live}}})
		credentialsOf(h, t, "ada", map[string]any{"providerId": "expo", "credentials": map[string]any{"deviceTokens": []string{expofake.Token(1)}}})
		eng := h.deliveryEngine(&testClock{t: time.Now().Add(time.Minute)})

		fc.Fail(providertest.InvalidToken, 1) // the first token FCM sees is no longer registered
		h.trigger(t, dev, map[string]any{"name": "replied", "to": "ada", "transactionId": "tx-push",
			"payload": map[string]any{"author": "Bob", "post": "42"}})
		drain(t, eng)

		got := fc.Received()
		require.Len(t, got, 1)
		require.Equal(t, []string{live}, got[0].Tokens)
		require.Equal(t, "New comment", got[0].Subject)
		require.Equal(t, "Bob replied", got[0].Content)
		require.Equal(t, "42", got[0].Data["postId"])
		require.Len(t, ex.Received(), 1, "each active push integration gets the subscriber's tokens for it")
		require.Equal(t, []any{live}, h.tokensOf(t, "ada", "fcm"), "the dead token was removed")
		require.Len(t, h.tokensOf(t, "ada", "expo"), 1)

		job := h.jobsOf(t, "tx-push")[0]
		require.Equal(t, "completed", job["status"])
		texts := strings.Join(detailTexts(t, job), "\n")
		require.Contains(t, texts, "Removed 1 invalid device token(s) from the subscriber's fcm credentials")
		require.NotContains(t, texts, dead, "device tokens are not written into details")
		msgs := objects(t, h.messages(t, url.Values{"channel": {"push"}, "transactionId": {"tx-push"}})["data"])
		require.Len(t, msgs, 2, "one message per integration")

		// Every token refused: the step fails, the tokens go, the workflow is not stuck.
		credentialsOf(h, t, "ada", map[string]any{"providerId": "expo", "credentials": map[string]any{"deviceTokens": []string{expofake.Token(2)}}})
		ex.Fail(providertest.InvalidToken, 2)
		h.trigger(t, dev, map[string]any{"name": "replied", "to": "ada", "transactionId": "tx-push-dead",
			"payload": map[string]any{"author": "Eve", "post": "43"}, "overrides": map[string]any{"push": map[string]any{"integrationIdentifier": "expo"}}})
		drain(t, eng)
		require.Empty(t, h.tokensOf(t, "ada", "expo"))
		job = h.jobsOf(t, "tx-push-dead")[0]
		require.Equal(t, "failed", job["status"])

		// No tokens at all: Novu's detail.
		h.trigger(t, dev, map[string]any{"name": "replied", "to": "ada", "transactionId": "tx-push-none",
			"payload": map[string]any{"author": "Eve", "post": "44"}, "overrides": map[string]any{"push": map[string]any{"integrationIdentifier": "expo"}}})
		drain(t, eng)
		require.Contains(t, detailTexts(t, h.jobsOf(t, "tx-push-none")[0]),
			"Subscriber credentials is missing the tokens for sending a push notification message")
	})
}
