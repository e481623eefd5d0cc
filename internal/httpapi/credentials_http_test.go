package httpapi_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCredentialsScenarios(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		fcmMain := h.createIntegration(t, dev, map[string]any{"providerId": "fcm", "identifier": "fcm-main", "active": true})
		fcmSecond := h.createIntegration(t, dev, map[string]any{"providerId": "fcm", "identifier": "fcm-second", "active": true})
		slack := h.createIntegration(t, dev, map[string]any{"providerId": "slack", "identifier": "slack-main", "active": true})
		h.createIntegration(t, dev, map[string]any{"providerId": "apns", "identifier": "apns-off"})
		require.Equal(t, true, fcmMain["primary"])
		require.Equal(t, false, fcmSecond["primary"])

		const sid = "cred|user/1 ü"
		h.createSubscriber(t, dev, map[string]any{"subscriberId": sid})
		h.createSubscriber(t, dev, map[string]any{"subscriberId": "full"})
		vars := map[string]string{
			"cred":    credPath(sid),
			"fcmID":   fcmMain["_id"].(string),
			"fcm2ID":  fcmSecond["_id"].(string),
			"slackID": slack["_id"].(string),
		}
		tokens := func(provider string, want ...string) func(t *testing.T, res response) {
			return func(t *testing.T, res response) {
				require.Equal(t, want, deviceTokens(t, res.Object(t), provider), "%s", res.Raw)
			}
		}
		fcm := func(toks ...string) map[string]any {
			return map[string]any{"providerId": "fcm", "credentials": map[string]any{"deviceTokens": toks}}
		}
		hundred := make([]string, 100)
		for i := range hundred {
			hundred[i] = fmt.Sprintf("tok-%03d", i)
		}

		runScenarios(t, h, vars, []scenario{
			{name: "append creates the channel of the primary integration", method: "PATCH", url: "{{cred}}", body: fcm("a", "b"), status: 200,
				check:    tokens("fcm", "a", "b"),
				contains: []string{`"subscriberId":"` + sid + `"`, `"_integrationId":"{{fcmID}}"`, `"integrationIdentifier":"fcm-main"`, `"providerId":"fcm"`}},
			{name: "append adds new tokens only, in order", method: "PATCH", url: "{{cred}}", body: fcm("b", "c", "c", "d"), status: 200,
				check: tokens("fcm", "a", "b", "c", "d")},
			{name: "omitting deviceTokens keeps them", method: "PATCH", url: "{{cred}}",
				body: map[string]any{"providerId": "fcm", "credentials": map[string]any{}}, status: 200, check: tokens("fcm", "a", "b", "c", "d")},
			{name: "replace", method: "PUT", url: "{{cred}}", body: fcm("z", "z"), status: 200, check: tokens("fcm", "z")},
			{name: "integrationIdentifier picks the integration", method: "PATCH", url: "{{cred}}",
				body:   map[string]any{"providerId": "fcm", "integrationIdentifier": "fcm-second", "credentials": map[string]any{"deviceTokens": []string{"s"}}},
				status: 200, check: tokens("fcm", "z", "s"), contains: []string{`"_integrationId":"{{fcm2ID}}"`, `"_integrationId":"{{fcmID}}"`}},
			{name: "chat credentials", method: "PATCH", url: "{{cred}}",
				body:   map[string]any{"providerId": "slack", "credentials": map[string]any{"webhookUrl": "https://hooks.example/1"}},
				status: 200, contains: []string{`"webhookUrl":"https://hooks.example/1"`, `"_integrationId":"{{slackID}}"`}},
			{name: "append merges the sent fields", method: "PATCH", url: "{{cred}}",
				body:   map[string]any{"providerId": "slack", "credentials": map[string]any{"channel": "general", "title": "T", "alertUid": "u", "imageUrl": "i", "state": "s", "externalUrl": "e"}},
				status: 200, contains: []string{`"webhookUrl":"https://hooks.example/1"`, `"channel":"general"`, `"externalUrl":"e"`, `"alertUid":"u"`}},
			{name: "replace drops the fields not sent", method: "PUT", url: "{{cred}}",
				body:   map[string]any{"providerId": "slack", "credentials": map[string]any{"channel": "random"}},
				status: 200, contains: []string{`"channel":"random"`}, absent: []string{`hooks.example`, `"externalUrl"`}},

			{name: "more than 100 tokens in one request", method: "PATCH", url: "{{cred}}", body: fcm(append(hundred, "one-more")...),
				status: 422, errorFields: []string{"credentials.deviceTokens"}},
			{name: "100 tokens fill a channel", method: "PUT", url: credPath("full"), body: fcm(hundred...), status: 200,
				check: func(t *testing.T, res response) { require.Len(t, deviceTokens(t, res.Object(t), "fcm"), 100) }},
			{name: "the 101st token", method: "PATCH", url: credPath("full"), body: fcm("tok-new"), status: 422,
				errorFields: []string{"credentials.deviceTokens"}},
			{name: "a known token on a full channel", method: "PATCH", url: credPath("full"), body: fcm("tok-007"), status: 200,
				check: func(t *testing.T, res response) { require.Len(t, deviceTokens(t, res.Object(t), "fcm"), 100) }},

			{name: "unknown provider", method: "PATCH", url: "{{cred}}",
				body: map[string]any{"providerId": "carrier-pigeon", "credentials": map[string]any{}}, status: 422, errorFields: []string{"providerId"}},
			{name: "provider of another channel", method: "PATCH", url: "{{cred}}",
				body: map[string]any{"providerId": "sendgrid", "credentials": map[string]any{}}, status: 422, errorFields: []string{"providerId"}},
			{name: "providerId missing", method: "PATCH", url: "{{cred}}",
				body: map[string]any{"credentials": map[string]any{}}, status: 422, errorFields: []string{"providerId"}},
			{name: "no integration of the provider", method: "PATCH", url: "{{cred}}", body: map[string]any{"providerId": "expo", "credentials": map[string]any{}},
				status: 422, errorFields: []string{"providerId"}},
			{name: "inactive integration only", method: "PATCH", url: "{{cred}}", body: map[string]any{"providerId": "apns", "credentials": map[string]any{}},
				status: 422, errorFields: []string{"providerId"}},
			{name: "inactive integration named", method: "PATCH", url: "{{cred}}",
				body:   map[string]any{"providerId": "apns", "integrationIdentifier": "apns-off", "credentials": map[string]any{}},
				status: 422, errorFields: []string{"integrationIdentifier"}},
			{name: "unknown integrationIdentifier", method: "PATCH", url: "{{cred}}",
				body:   map[string]any{"providerId": "fcm", "integrationIdentifier": "nope", "credentials": map[string]any{}},
				status: 422, errorFields: []string{"integrationIdentifier"}},
			{name: "integrationIdentifier of another provider", method: "PUT", url: "{{cred}}",
				body:   map[string]any{"providerId": "fcm", "integrationIdentifier": "slack-main", "credentials": map[string]any{}},
				status: 422, errorFields: []string{"integrationIdentifier"}},
			{name: "unknown subscriber", method: "PATCH", url: credPath("nobody"), body: fcm("x"), status: 404},
			{name: "unknown subscriber, replace", method: "PUT", url: credPath("nobody"), body: fcm("x"), status: 404},

			{name: "credentials missing", method: "PATCH", url: "{{cred}}", body: map[string]any{"providerId": "fcm"},
				status: 422, errorFields: []string{"credentials"}},
			{name: "credentials null", method: "PATCH", url: "{{cred}}", body: `{"providerId":"fcm","credentials":null}`,
				status: 422, errorFields: []string{"credentials"}},
			{name: "credentials not an object", method: "PATCH", url: "{{cred}}", body: `{"providerId":"fcm","credentials":"x"}`,
				status: 422, errorFields: []string{"credentials"}},
			{name: "unknown credentials field", method: "PATCH", url: "{{cred}}", body: `{"providerId":"fcm","credentials":{"apiKey":"x"}}`,
				status: 422, errorFields: []string{"credentials.apiKey"}},
			{name: "deviceTokens not an array", method: "PATCH", url: "{{cred}}", body: `{"providerId":"fcm","credentials":{"deviceTokens":"x"}}`,
				status: 422, errorFields: []string{"credentials.deviceTokens"}},
			{name: "an empty device token", method: "PATCH", url: "{{cred}}", body: `{"providerId":"fcm","credentials":{"deviceTokens":["ok",""]}}`,
				status: 422, errorFields: []string{"credentials.deviceTokens.1"}},
			{name: "a device token over 1024 characters", method: "PATCH", url: "{{cred}}", body: fcm(repeat("t", 1025)),
				status: 422, errorFields: []string{"credentials.deviceTokens.0"}},
			{name: "wrong types name every field", method: "PATCH", url: "{{cred}}",
				body:        `{"providerId":1,"integrationIdentifier":2,"credentials":{"webhookUrl":3,"channel":[],"deviceTokens":[4],"title":{},"state":true}}`,
				status:      422,
				errorFields: []string{"providerId", "integrationIdentifier", "credentials.webhookUrl", "credentials.channel", "credentials.deviceTokens", "credentials.title", "credentials.state"}},
			{name: "NUL in strings", method: "PATCH", url: "{{cred}}",
				body:        `{"providerId":"fcm","integrationIdentifier":"\u0000","credentials":{"deviceTokens":["\u0000"],"webhookUrl":"\u0000"}}`,
				status:      422,
				errorFields: []string{"integrationIdentifier", "credentials.deviceTokens.0", "credentials.webhookUrl"}},
			{name: "NUL in the path", method: "PUT", url: "/v1/subscribers/%00/credentials", body: fcm("x"), status: 422, errorFields: []string{"subscriberId"}},
			{name: "not JSON", method: "PATCH", url: "{{cred}}", body: `{"providerId":`, status: 400},
			{name: "empty body", method: "PUT", url: "{{cred}}", body: ``, status: 400},
			{name: "subscriberId over 256 characters", method: "PATCH", url: credPath(repeat("x", 257)), body: fcm("x"), status: 422, errorFields: []string{"subscriberId"}},

			{name: "delete the channels of a provider", method: "DELETE", url: "{{cred}}/fcm", status: 200,
				check: tokens("fcm"), contains: []string{`"providerId":"slack"`}, absent: []string{`"providerId":"fcm"`}},
			{name: "delete a provider without channels", method: "DELETE", url: "{{cred}}/expo", status: 200, contains: []string{`"providerId":"slack"`}},
			{name: "delete an unknown provider", method: "DELETE", url: "{{cred}}/banana", status: 422, errorFields: []string{"providerId"}},
			{name: "delete a provider of another channel", method: "DELETE", url: "{{cred}}/sendgrid", status: 422, errorFields: []string{"providerId"}},
			{name: "delete for an unknown subscriber", method: "DELETE", url: credPath("nobody") + "/fcm", status: 404},
		})

		// The channel survives a re-read, and the subscriber's version moved.
		sub := h.getSubscriber(t, sid)
		require.Empty(t, deviceTokens(t, sub, "fcm"))
		require.Greater(t, sub["__v"].(float64), float64(0))
		require.True(t, strings.Contains(fmt.Sprint(sub["channels"]), "random"))
	})
}
