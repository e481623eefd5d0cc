package httpapi_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/provider/chat/chatwebhook/chatwebhookfake"
	"github.com/herald-notify/herald/internal/provider/chat/discord/discordfake"
	"github.com/herald-notify/herald/internal/provider/chat/slack/slackfake"
	"github.com/herald-notify/herald/internal/provider/providertest"
)

// credentialsOf appends provider credentials to a subscriber.
func credentialsOf(h *harness, t *testing.T, sid string, body map[string]any) {
	t.Helper()
	res := h.call(t, h.authFor(asDev), "PATCH", "/v1/subscribers/"+url.PathEscape(sid)+"/credentials", body, nil)
	require.Equal(t, 200, res.Status, "%s", res.Raw)
}

func chatWorkflow(key string) map[string]any {
	return map[string]any{"name": "Chat " + key, "workflowId": key, "steps": []any{
		map[string]any{"name": "Chat", "type": "chat", "controlValues": map[string]any{"body": "Build {{payload.build}} passed for {{subscriber.firstName}}"}},
		map[string]any{"name": "Inbox", "type": "in_app", "controlValues": map[string]any{"body": "after the chat"}},
	}}
}

func TestChatDelivery(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		sl, dc, wh := slackfake.New(), discordfake.New(), chatwebhookfake.New()
		defer sl.Close()
		defer dc.Close()
		defer wh.Close()
		slackIn := h.createIntegration(t, dev, map[string]any{"providerId": "slack", "identifier": "slack", "active": true})
		h.createIntegration(t, dev, map[string]any{"providerId": "discord", "identifier": "discord", "active": true})
		// The generic webhook's URL is the integration's: the subscriber's entry names none.
		whCreds := map[string]any{"webhookUrl": wh.WebhookURL()}
		for k, v := range wh.Credentials() {
			whCreds[k] = v
		}
		h.createIntegration(t, dev, map[string]any{"providerId": "chat-webhook", "identifier": "hook", "active": true, "credentials": whCreds})
		h.createWorkflow(t, dev, chatWorkflow("built"))
		h.createSubscriber(t, dev, map[string]any{"subscriberId": "ada", "firstName": "Ada"})
		credentialsOf(h, t, "ada", map[string]any{"providerId": "slack", "credentials": map[string]any{"webhookUrl": sl.WebhookURL()}})
		credentialsOf(h, t, "ada", map[string]any{"providerId": "discord", "credentials": map[string]any{"webhookUrl": dc.WebhookURL()}})
		credentialsOf(h, t, "ada", map[string]any{"providerId": "chat-webhook", "credentials": map[string]any{"channel": "ops"}})
		clock := &testClock{t: time.Now().Add(time.Minute)}
		eng := h.deliveryEngine(clock)

		h.trigger(t, dev, map[string]any{"name": "built", "to": "ada", "payload": map[string]any{"build": 7}, "transactionId": "tx-chat"})
		drain(t, eng)
		for name, f := range map[string]providertest.Fake{"slack": sl, "discord": dc, "chat-webhook": wh} {
			got := f.Received()
			require.Len(t, got, 1, name)
			require.Equal(t, "Build 7 passed for Ada", got[0].Content, name)
			if name == "chat-webhook" {
				require.Contains(t, string(got[0].Body), `"channel":"ops"`, "the subscriber's chat channel goes along")
			}
		}
		jobs := h.jobsOf(t, "tx-chat")
		require.Equal(t, "completed", jobs[0]["status"])
		require.Equal(t, "completed", jobs[1]["status"])
		msgs := objects(t, h.messages(t, url.Values{"channel": {"chat"}, "transactionId": {"tx-chat"}})["data"])
		require.Len(t, msgs, 3, "one message per webhook")
		ids := map[string]string{}
		for _, m := range msgs {
			require.Equal(t, "sent", m["status"])
			ids[m["providerId"].(string)] = m["providerMessageId"].(string)
			for _, u := range []string{sl.WebhookURL(), dc.WebhookURL(), wh.WebhookURL()} {
				require.NotContains(t, mustJSON(t, m), u, "no webhook URL (a secret) in the message")
			}
		}
		require.Equal(t, sl.Received()[0].MessageID, ids["slack"])
		require.Equal(t, dc.Received()[0].MessageID, ids["discord"])

		// A failing webhook is retried alone: the others are not sent twice.
		dc.Fail(providertest.Unavailable, 1)
		h.trigger(t, dev, map[string]any{"name": "built", "to": "ada", "payload": map[string]any{"build": 8}, "transactionId": "tx-chat-retry"})
		for range 3 {
			drain(t, eng)
			clock.Advance(10 * time.Second)
		}
		require.Len(t, sl.Received(), 2)
		require.Len(t, dc.Received(), 2)
		require.Equal(t, 3, dc.Requests())
		require.Len(t, wh.Received(), 2)
		require.Len(t, objects(t, h.messages(t, url.Values{"transactionId": {"tx-chat-retry"}, "channel": {"chat"}})["data"]), 3)

		// Pinned to Slack: only Slack.
		h.trigger(t, dev, map[string]any{"name": "built", "to": "ada", "payload": map[string]any{"build": 9}, "transactionId": "tx-chat-pinned",
			"overrides": map[string]any{"chat": map[string]any{"integrationIdentifier": "slack"}}})
		drain(t, eng)
		require.Len(t, sl.Received(), 3)
		require.Len(t, dc.Received(), 2)
		job := h.jobsOf(t, "tx-chat-pinned")[0]
		require.Equal(t, slackIn["_id"], objects(t, h.messages(t, url.Values{"transactionId": {"tx-chat-pinned"}, "channel": {"chat"}})["data"])[0]["_integrationId"])
		require.Equal(t, "completed", job["status"])

		// No webhook anywhere: Novu's detail, and the workflow goes on.
		h.createSubscriber(t, dev, map[string]any{"subscriberId": "nohook"})
		h.trigger(t, dev, map[string]any{"name": "built", "to": "nohook", "transactionId": "tx-nohook",
			"overrides": map[string]any{"chat": map[string]any{"integrationIdentifier": "slack"}}})
		drain(t, eng)
		jobs = h.jobsOf(t, "tx-nohook")
		require.Equal(t, "failed", jobs[0]["status"])
		require.Contains(t, strings.Join(detailTexts(t, jobs[0]), "\n"), "Webhook URL for the chat channel is missing")
		require.Equal(t, "completed", jobs[1]["status"])
	})
}
