package httpapi_test

import (
	"encoding/base64"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"
)

// The fuzz targets send arbitrary input through the real handlers on a
// SQLite harness: whatever a client sends, the answer is never a 5xx and
// always matches the OpenAPI document. Their seeds run in plain `go test`.
//
//	go test -run='^$' -fuzz=FuzzSubscriberCreateBody -fuzztime=20s ./internal/httpapi/

// fuzzCheck sends one request and checks the answer.
func fuzzCheck(t *testing.T, h *harness, method, target, rawQuery string, body []byte) response {
	t.Helper()
	req := newRequest(t, "ApiKey "+h.DevKey, method, target, body, nil)
	if rawQuery != "" {
		req.URL.RawQuery = rawQuery
	}
	res := h.serve(req)
	require.Less(t, res.Status, 500, "%s %s?%q %q: %s", method, target, rawQuery, body, res.Raw)
	validateResponse(t, docProbe(req), res)
	if res.Status >= 400 {
		requireErrorShape(t, res, method, target)
	}
	return res
}

func FuzzSubscriberCreateBody(f *testing.F) {
	h := newHarness(f, "sqlite")
	for _, seed := range []string{
		`{"subscriberId":"a"}`,
		`{"subscriberId":"user|1:a@b+c/d e","firstName":"Ada","lastName":null,"email":"ada@example.com","phone":"+1",` +
			`"avatar":"https://x/y.png","locale":"en-US","timezone":"Europe/Paris","data":{"a":[1,{"b":null}]}}`,
		`{"subscriberId":"a","email":"Ada <a@b.c>","locale":"xx-!!","timezone":"Local"}`,
		`{"subscriberId":1,"firstName":2,"data":"x"}`,
		`{"subscriberId":"\u0000","firstName":"\ud800"}`,
		`{"subscriberId":"a","data":{"k":1e999}}`,
		`{"subscriberId":"a","data":{"k":-0.0,"n":12345678901234567890}}`,
		`{"subscriberId":"a","subscriberId":"b"}`,
		`{"subscriberId":"` + repeat("é", 257) + `"}`,
		`{"subscriberId":"a"} trailing`,
		`[]`, `null`, `"x"`, `{`, ``, `{"subscriberId":{"$ne":null}}`, "\xff\xfe{}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		res := fuzzCheck(t, h, "POST", "/v2/subscribers", "", body)
		if res.Status == 201 {
			sub := res.Object(t)
			got := h.call(t, "ApiKey "+h.DevKey, "GET", subPath(sub["subscriberId"].(string)), nil, nil)
			require.Equal(t, 200, got.Status, "a created subscriber is readable: %s", got.Raw)
		}
	})
}

func FuzzCredentialsBody(f *testing.F) {
	h := newHarness(f, "sqlite")
	dev := "ApiKey " + h.DevKey
	h.createIntegration(f, dev, map[string]any{"providerId": "fcm", "identifier": "fcm-main", "active": true})
	h.createIntegration(f, dev, map[string]any{"providerId": "slack", "identifier": "slack-main", "active": true})
	h.createSubscriber(f, dev, map[string]any{"subscriberId": "fuzz"})
	for _, seed := range []string{
		`{"providerId":"fcm","credentials":{"deviceTokens":["a","b","a"]}}`,
		`{"providerId":"fcm","integrationIdentifier":"fcm-main","credentials":{}}`,
		`{"providerId":"slack","credentials":{"webhookUrl":"https://h/1","channel":"c","alertUid":"u","title":"t","imageUrl":"i","state":"s","externalUrl":"e"}}`,
		`{"providerId":"fcm","integrationIdentifier":"nope","credentials":{}}`,
		`{"providerId":"apns","credentials":{}}`,
		`{"providerId":"nope","credentials":{"deviceTokens":[""]}}`,
		`{"providerId":"fcm","credentials":{"deviceTokens":"x","bogus":1}}`,
		`{"providerId":"fcm","credentials":{"deviceTokens":[null,1,{}]}}`,
		`{"providerId":"fcm","credentials":null}`,
		`{"providerId":1,"integrationIdentifier":[],"credentials":[]}`,
		`{"providerId":"fcm","credentials":{"deviceTokens":["\u0000","\ud800"]}}`,
		`{`, `[]`, ``, `null`,
	} {
		f.Add(false, []byte(seed))
		f.Add(true, []byte(seed))
	}
	f.Fuzz(func(t *testing.T, replace bool, body []byte) {
		method := "PATCH"
		if replace {
			method = "PUT"
		}
		fuzzCheck(t, h, method, credPath("fuzz"), "", body)
	})
}

func FuzzSubscriberSearchQuery(f *testing.F) {
	h := newHarness(f, "sqlite")
	dev := "ApiKey " + h.DevKey
	for _, sid := range []string{"q-1", "q-2", "q-3"} {
		h.createSubscriber(f, dev, map[string]any{"subscriberId": sid, "firstName": "Ada", "email": sid + "@example.com"})
	}
	page := h.call(f, dev, "GET", "/v2/subscribers?limit=1", nil, nil).Object(f)
	next := page["next"].(string)
	page = h.call(f, dev, "GET", "/v2/subscribers?limit=1&orderBy=updatedAt", nil, nil).Object(f)
	nextUpdated := page["next"].(string)
	b64 := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	for _, seed := range []string{
		"", "limit=1", "limit=100&orderBy=createdAt&orderDirection=ASC", "limit=0", "limit=-1", "limit=1e3", "limit=%00",
		"after=" + next, "before=" + next, "after=" + next + "&includeCursor=true", "after=" + next + "&before=" + next,
		"orderBy=updatedAt&after=" + nextUpdated, "after=" + nextUpdated,
		"after=" + b64(`{"o":"_id","i":"0123456789abcdef01234567"}`),
		"after=" + b64(`{"o":"createdAt","k":-9223372036854775808,"i":"0123456789abcdef01234567"}`),
		"orderBy=createdAt&before=" + b64(`{"o":"createdAt","k":9223372036854775807,"i":"ffffffffffffffffffffffff"}`),
		"after=" + b64(`{"o":"_id","i":"0123456789abcdef01234567","x":[]}`),
		"after=" + b64(`null`), "after=" + b64(`[]`), "after=====", "after=%ZZ",
		"email=%25&name=_&phone=%5C&subscriberId=q-1", "name=%FF%FE", "email=" + repeat("a", 1100),
		"subscriberId=%00", "limit=1;limit=2", "limit=1&limit=200", "includeCursor=TRUE", "orderDirection=desc",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, query string) {
		res := fuzzCheck(t, h, "GET", "/v2/subscribers", query, nil)
		if res.Status == 200 {
			body := res.Object(t)
			require.LessOrEqual(t, len(body["data"].([]any)), 100)
			// A cursor the server hands out is one it accepts.
			if next, ok := body["next"].(string); ok {
				// Read the query as the server does (ParseQuery keeps what parses).
				sent, _ := url.ParseQuery(query)
				q := url.Values{"after": {next}}
				if sent.Has("orderBy") {
					q.Set("orderBy", sent.Get("orderBy"))
				}
				fuzzCheck(t, h, "GET", "/v2/subscribers", q.Encode(), nil)
			}
		}
	})
}

func FuzzIntegrationCreateBody(f *testing.F) {
	h := newHarness(f, "sqlite")
	for _, seed := range []string{
		`{"providerId":"sendgrid"}`,
		`{"providerId":"anthropic"}`,
		`{"providerId":"anthropic","channel":"chat"}`,
		`{"providerId":"twilio","channel":"sms","name":"T","identifier":"t","active":true,"credentials":{"accountSid":"a","secure":true,` +
			`"tlsOptions":{"x":[1]}},"configurations":{"inboundWebhookEnabled":false,"inboundWebhookSigningKey":"k"},` +
			`"conditions":[{"isNegated":true,"type":"GROUP","value":"OR","children":[{"field":"f","value":"v","operator":"IN","on":"payload"}]}]}`,
		`{"providerId":"sendgrid","channel":"sms"}`,
		`{"providerId":"svc","channel":"in_app","active":true}`,
		`{"providerId":"nope","channel":"fax"}`,
		`{"providerId":"sendgrid","credentials":{"bogus":1,"apiKey":2,"secure":"y","tlsOptions":[]}}`,
		`{"providerId":"sendgrid","conditions":[1,{"children":[1,{"operator":2}]},{"type":"TEXT","value":"AND","children":null}]}`,
		`{"providerId":"sendgrid","conditions":null,"configurations":null,"credentials":null}`,
		`{"providerId":"sendgrid","identifier":"\u0000"}`,
		`{`, `[]`, ``, `null`, `{"providerId":{}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		res := fuzzCheck(t, h, "POST", "/v1/integrations", "", body)
		if res.Status == 201 {
			require.NotContains(t, res.Object(t), "credentials", "an API-key caller never gets credentials")
		}
	})
}
