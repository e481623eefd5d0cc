package httpapi_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestIntegrationScenarios(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		mail := h.createIntegration(t, dev, map[string]any{"providerId": "sendgrid", "identifier": "mail-main", "active": true,
			"credentials": map[string]any{"apiKey": "SG.secret", "from": "noreply@example.com"}})
		require.Equal(t, true, mail["primary"], "the first active integration of a channel becomes primary")
		spare := h.createIntegration(t, dev, map[string]any{"providerId": "mailgun", "identifier": "mail-spare",
			"credentials": map[string]any{"apiKey": "mg-key", "domain": "mg.example.com", "from": "noreply@example.com"}})
		draft := h.createIntegration(t, dev, map[string]any{"providerId": "postmark", "identifier": "mail-draft"})
		doomed := h.createIntegration(t, dev, map[string]any{"providerId": "twilio", "identifier": "sms-doomed", "active": true})
		vars := map[string]string{"mail": mail["_id"].(string), "spare": spare["_id"].(string), "doomed": doomed["_id"].(string), "draft": draft["_id"].(string),
			"absent": "0123456789abcdef01234567"}

		field := func(name string, want any) func(t *testing.T, res response) {
			return func(t *testing.T, res response) { require.Equal(t, want, res.Object(t)[name], "%s: %s", name, res.Raw) }
		}
		runScenarios(t, h, vars, []scenario{
			// create
			{name: "create derives channel, kind, name and identifier", method: "POST", url: "/v1/integrations", body: map[string]any{"providerId": "postmark"},
				status: 201, contains: []string{`"channel":"email"`, `"kind":"delivery"`, `"name":"postmark"`, `"identifier":"postmark-`,
					`"active":false`, `"primary":false`, `"deleted":false`, `"conditions":[]`, `"configurations":{}`},
				absent: []string{`"credentials"`, `"deletedAt"`}},
			{name: "create with every field", method: "POST", url: "/v1/integrations",
				body: map[string]any{"providerId": "twilio", "channel": "sms", "name": "Texts", "identifier": "texts", "active": true,
					"credentials":    map[string]any{"accountSid": "AC1", "token": "tw-secret", "from": "+15555550100", "secure": true, "tlsOptions": map[string]any{"rejectUnauthorized": false}},
					"configurations": map[string]any{"inboundWebhookEnabled": true, "inboundWebhookSigningKey": "k"},
					"conditions": []any{map[string]any{"isNegated": false, "type": "GROUP", "value": "AND",
						"children": []any{map[string]any{"field": "plan", "value": "pro", "operator": "EQUAL", "on": "subscriber"}}}}},
				status: 201, contains: []string{`"name":"Texts"`, `"identifier":"texts"`, `"active":true`, `"channel":"sms"`,
					`"inboundWebhookEnabled":true`, `"operator":"EQUAL"`}, absent: []string{`"credentials"`, `tw-secret`}},
			{name: "an active integration lacking a credential its provider requires", method: "POST", url: "/v1/integrations",
				body:   map[string]any{"providerId": "sendgrid", "active": true, "credentials": map[string]any{"apiKey": "SG.x"}},
				status: 422, errorFields: []string{"credentials.from"}},
			{name: "an inactive integration may lack credentials (a draft)", method: "POST", url: "/v1/integrations",
				body: map[string]any{"providerId": "sendgrid", "identifier": "draft-mail"}, status: 201},
			{name: "activating a draft that lacks credentials", method: "PUT", url: "/v1/integrations/{{draft}}",
				body: map[string]any{"active": true}, status: 422, errorFields: []string{"credentials.apiKey", "credentials.from"}},
			{name: "making a draft that lacks credentials primary (which activates it)", method: "POST",
				url: "/v1/integrations/{{draft}}/set-primary", status: 422, errorFields: []string{"credentials.apiKey", "credentials.from"}},
			{name: "a baseUrl that is not an http(s) URL", method: "POST", url: "/v1/integrations",
				body:   map[string]any{"providerId": "sendgrid", "credentials": map[string]any{"baseUrl": "file:///etc/passwd"}},
				status: 422, errorFields: []string{"credentials.baseUrl"}},
			{name: "the first active of a channel becomes primary", method: "POST", url: "/v1/integrations",
				body: map[string]any{"providerId": "expo", "active": true}, status: 201, check: field("primary", true)},
			{name: "active defaults to false", method: "POST", url: "/v1/integrations", body: map[string]any{"providerId": "slack"},
				status: 201, check: field("active", false)},
			{name: "agent integration has no channel", method: "POST", url: "/v1/integrations", body: map[string]any{"providerId": "anthropic", "active": true},
				status: 201, contains: []string{`"kind":"agent"`, `"providerId":"anthropic"`}, absent: []string{`"channel"`}},
			{name: "agent integration with a channel", method: "POST", url: "/v1/integrations", body: map[string]any{"providerId": "anthropic", "channel": "chat"},
				status: 422, errorFields: []string{"channel"}},
			{name: "wrong channel for the provider", method: "POST", url: "/v1/integrations", body: map[string]any{"providerId": "sendgrid", "channel": "sms"},
				status: 422, errorFields: []string{"channel"}},
			{name: "in-app provider on the push channel", method: "POST", url: "/v1/integrations", body: map[string]any{"providerId": "svc", "channel": "push"},
				status: 422, errorFields: []string{"channel"}},
			{name: "unknown channel", method: "POST", url: "/v1/integrations", body: map[string]any{"providerId": "sendgrid", "channel": "fax"},
				status: 422, errorFields: []string{"channel"}},
			{name: "unknown provider", method: "POST", url: "/v1/integrations", body: map[string]any{"providerId": "carrier-pigeon"},
				status: 422, errorFields: []string{"providerId"}},
			{name: "providerId missing", method: "POST", url: "/v1/integrations", body: map[string]any{"name": "x"},
				status: 422, errorFields: []string{"providerId"}},
			{name: "identifier taken", method: "POST", url: "/v1/integrations", body: map[string]any{"providerId": "mailjet", "identifier": "mail-main"},
				status: 409, contains: []string{`mail-main`}},
			{name: "wrong types name every field", method: "POST", url: "/v1/integrations",
				body:        `{"providerId":1,"channel":2,"name":3,"identifier":4,"active":"yes","credentials":"x","configurations":5,"conditions":{}}`,
				status:      422,
				errorFields: []string{"providerId", "channel", "name", "identifier", "active", "credentials", "configurations", "conditions"}},
			{name: "bad credentials fields", method: "POST", url: "/v1/integrations",
				body:        `{"providerId":"sendgrid","credentials":{"apiKey":1,"secure":"yes","bogus":"x","tlsOptions":[]}}`,
				status:      422,
				errorFields: []string{"credentials.apiKey", "credentials.secure", "credentials.bogus", "credentials.tlsOptions"}},
			{name: "bad configurations", method: "POST", url: "/v1/integrations",
				body:   `{"providerId":"sendgrid","configurations":{"inboundWebhookEnabled":"y","other":1}}`,
				status: 422, errorFields: []string{"configurations.inboundWebhookEnabled", "configurations.other"}},
			{name: "bad conditions", method: "POST", url: "/v1/integrations",
				body: `{"providerId":"sendgrid","conditions":[{"type":"WRONG","value":"AND","children":[{"field":"a","value":"b","operator":"NOPE","on":"x"}]},` +
					`{"value":"OR"},"x",{"type":"TEXT","value":"AND","children":"no"}]}`,
				status: 422,
				errorFields: []string{"conditions.0.type", "conditions.0.children.0.operator", "conditions.0.children.0.on",
					"conditions.1.type", "conditions.2", "conditions.3.children"}},
			{name: "NUL in strings", method: "POST", url: "/v1/integrations",
				body:   `{"providerId":"sendgrid","name":"\u0000","identifier":"a\u0000","credentials":{"apiKey":"\u0000"}}`,
				status: 422, errorFields: []string{"name", "identifier", "credentials.apiKey"}},
			{name: "create not JSON", method: "POST", url: "/v1/integrations", body: `providerId=sendgrid`, status: 400},
			{name: "create empty body", method: "POST", url: "/v1/integrations", body: ``, status: 400},

			// lists
			{name: "list has inactive ones and both environments", method: "GET", url: "/v1/integrations", status: 200,
				contains: []string{`"identifier":"mail-spare"`, `"identifier":"herald-inbox"`, `"active":false`}, absent: []string{`"credentials"`},
				check: func(t *testing.T, res response) {
					envs := map[string]bool{}
					for _, it := range res.Array(t) {
						envs[it.(map[string]any)["_environmentId"].(string)] = true
					}
					require.Len(t, envs, 2, "integration lists are organization-wide (the API contract)")
				}},
			{name: "active list has no inactive ones", method: "GET", url: "/v1/integrations/active", status: 200,
				contains: []string{`"identifier":"mail-main"`, `"identifier":"herald-inbox"`}, absent: []string{`"active":false`, `"mail-spare"`, `"credentials"`}},

			// update
			{name: "update the name", method: "PUT", url: "/v1/integrations/{{spare}}", body: map[string]any{"name": "Spare"}, status: 200,
				contains: []string{`"name":"Spare"`, `"identifier":"mail-spare"`, `"_id":"{{spare}}"`}, absent: []string{`"credentials"`}},
			{name: "update to a taken identifier", method: "PUT", url: "/v1/integrations/{{spare}}", body: map[string]any{"identifier": "mail-main"}, status: 409},
			{name: "update to an empty name", method: "PUT", url: "/v1/integrations/{{spare}}", body: map[string]any{"name": "", "identifier": ""},
				status: 422, errorFields: []string{"name", "identifier"}},
			{name: "update wrong types", method: "PUT", url: "/v1/integrations/{{spare}}", body: `{"name":1,"active":"no","credentials":[],"conditions":1}`,
				status: 422, errorFields: []string{"name", "active", "credentials", "conditions"}},
			{name: "update not JSON", method: "PUT", url: "/v1/integrations/{{spare}}", body: `{`, status: 400},
			{name: "update with NUL", method: "PUT", url: "/v1/integrations/{{spare}}", body: `{"name":"\u0000","identifier":"\u0000"}`,
				status: 422, errorFields: []string{"name", "identifier"}},
			{name: "update unknown", method: "PUT", url: "/v1/integrations/{{absent}}", body: map[string]any{"name": "x"}, status: 404},
			{name: "deactivating the primary unsets primary", method: "PUT", url: "/v1/integrations/{{mail}}", body: map[string]any{"active": false},
				status: 200, contains: []string{`"active":false`, `"primary":false`}},
			{name: "reactivating makes it primary of a channel without one", method: "PUT", url: "/v1/integrations/{{mail}}", body: map[string]any{"active": true},
				status: 200, contains: []string{`"active":true`, `"primary":true`}},

			// set-primary
			{name: "set-primary", method: "POST", url: "/v1/integrations/{{spare}}/set-primary", status: 200,
				contains: []string{`"primary":true`, `"active":true`, `"_id":"{{spare}}"`}, absent: []string{`"credentials"`}},
			{name: "set-primary moves primary", method: "GET", url: "/v1/integrations", status: 200,
				check: func(t *testing.T, res response) {
					require.Equal(t, false, findIntegration(t, res, vars["mail"])["primary"])
					require.Equal(t, true, findIntegration(t, res, vars["spare"])["primary"])
				}},
			{name: "set-primary unknown", method: "POST", url: "/v1/integrations/{{absent}}/set-primary", status: 404},

			// delete
			{name: "delete returns the remaining integrations", method: "DELETE", url: "/v1/integrations/{{doomed}}", status: 200,
				absent: []string{`{{doomed}}`, `"credentials"`},
				check: func(t *testing.T, res response) {
					for _, it := range res.Array(t) {
						require.Equal(t, it.(map[string]any)["_environmentId"], mail["_environmentId"], "the remaining ones of the environment")
					}
					require.NotNil(t, findIntegration(t, res, vars["mail"]))
				}},
			{name: "deleted: gone from the list", method: "GET", url: "/v1/integrations", status: 200, absent: []string{`{{doomed}}`}},
			{name: "deleted: gone from the active list", method: "GET", url: "/v1/integrations/active", status: 200, absent: []string{`{{doomed}}`}},
			{name: "deleted: delete again", method: "DELETE", url: "/v1/integrations/{{doomed}}", status: 404},
			{name: "deleted: update", method: "PUT", url: "/v1/integrations/{{doomed}}", body: map[string]any{"name": "x"}, status: 404},
			{name: "deleted: set-primary", method: "POST", url: "/v1/integrations/{{doomed}}/set-primary", status: 404},
			{name: "deleted: its identifier is free", method: "POST", url: "/v1/integrations", body: map[string]any{"providerId": "twilio", "identifier": "sms-doomed"},
				status: 201},
			{name: "delete unknown", method: "DELETE", url: "/v1/integrations/{{absent}}", status: 404},
		})

		t.Run("malformed integrationId is a 422 on every route", func(t *testing.T) {
			for _, bad := range []string{"xyz", "0123456789abcdef0123456", "0123456789abcdef012345678", "0123456789abcdefg1234567",
				"%20", "%00", "..%2F..%2Fetc", repeat("a", 300), "0123456789abcdef01234567%00", "%F0%9F%9A%80"} {
				for _, rt := range []struct{ method, url string }{
					{"PUT", "/v1/integrations/" + bad}, {"DELETE", "/v1/integrations/" + bad}, {"POST", "/v1/integrations/" + bad + "/set-primary"},
				} {
					var body any
					if rt.method == "PUT" {
						body = map[string]any{"name": "x"}
					}
					res := h.call(t, dev, rt.method, rt.url, body, nil)
					requireError(t, res, 422, rt.method, rt.url, "integrationId")
				}
			}
		})

		t.Run("upper-case hex ids are ids", func(t *testing.T) {
			up := strings.ToUpper(vars["spare"])
			res := h.call(t, dev, "PUT", "/v1/integrations/"+up, map[string]any{"name": "Upper"}, nil)
			require.Equal(t, 200, res.Status, "%s", res.Raw)
			require.Equal(t, vars["spare"], res.Object(t)["_id"])
			res = h.call(t, dev, "POST", "/v1/integrations/"+strings.ToUpper(vars["absent"])+"/set-primary", nil, nil)
			require.Equal(t, 404, res.Status, "%s", res.Raw)
		})
	})
}
