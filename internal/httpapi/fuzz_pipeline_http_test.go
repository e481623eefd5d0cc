package httpapi_test

import (
	"encoding/base64"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/engine"
)

// Fuzz targets of the pipeline: the trigger body and the feed's payload
// filter, through the real handlers on SQLite. Run them with
//
//	go test -run='^$' -fuzz=FuzzTriggerBody -fuzztime=20s ./internal/httpapi/
//	go test -run='^$' -fuzz=FuzzFeedPayloadFilter -fuzztime=20s ./internal/httpapi/

func FuzzTriggerBody(f *testing.F) {
	h := newHarness(f, "sqlite")
	dev := h.authFor(asDev)
	eng := h.newEngine(engine.Options{})
	h.createWorkflow(f, dev, commentWorkflow())
	h.createWorkflow(f, dev, map[string]any{"name": "Loops", "steps": []any{
		map[string]any{"name": "Inbox", "type": "in_app", "controlValues": map[string]any{
			"body": "{% for x in payload.items %}{{x.name | upcase}}{% endfor %}{{payload.n | plus: 1}}{{subscriber.data.k}}"}},
	}})
	h.createSubscriber(f, dev, map[string]any{"subscriberId": "fz", "data": map[string]any{"k": "v"}})
	h.createSubscriber(f, dev, map[string]any{"subscriberId": "fz-member"})
	res := h.call(f, dev, "POST", "/v2/topics/fz-topic/subscriptions", map[string]any{"subscriptions": []string{"fz", "fz-member"}}, nil)
	require.Equal(f, 201, res.Status, "%s", res.Raw)
	for _, seed := range []string{
		`{"name":"comment-posted","to":[{"type":"Topic","topicKey":"fz-topic","exclude":["fz"]},"fz"],"actor":"fz-member"}`,
		`{"name":"loops","to":[{"type":"Topic","topicKey":"fz-topic"},{"type":"Topic","topicKey":"fz-topic","exclude":[]}]}`,
		`{"name":"comment-posted","to":[{"type":"Topic","topicKey":"missing@example.com","exclude":["a","a"]}]}`,
		`{"name":"comment-posted","to":"fz"}`,
		`{"name":"comment-posted","to":"fz","payload":{"author":"<b>","post":{"id":1,"title":null}},"actor":"fz","transactionId":"t1"}`,
		`{"name":"comment-posted","to":{"subscriberId":"fz2","firstName":"F","email":"f@example.com","data":{"a":[1]}}}`,
		`{"name":"comment-posted","to":["fz",{"subscriberId":"fz3"},"fz"],"actor":{"subscriberId":"a","avatar":"https://x/y.png"}}`,
		`{"name":"loops","to":"fz","payload":{"items":[{"name":"a"},{"name":1},null,{}],"n":"x"}}`,
		`{"name":"loops","to":"fz","payload":{"items":{"name":"a"},"n":1e308}}`,
		`{"name":"loops","to":"fz","payload":{"items":"{{ }}","n":[]}}`,
		`{"name":"comment-posted","to":"fz","payload":{"post":{"title":"{% raw %}{{x}}{% endraw %}"}}}`,
		`{"name":"comment-posted","to":"fz","overrides":{"email":{"to":"x"}},"tenant":"t","bridgeUrl":"u"}`,
		`{"name":"comment-posted","to":{"type":"Topic","topicKey":"k"}}`,
		`{"name":"comment-posted","to":[]}`, `{"name":"comment-posted","to":[[]]}`, `{"name":"comment-posted","to":null}`,
		`{"name":"comment-posted","to":"","transactionId":""}`, `{"name":"","to":"a"}`, `{"name":1,"to":2,"payload":3}`,
		`{"name":"comment-posted","to":"fz","payload":{"k":"\u0000"}}`, `{"name":"comment-posted","to":"fz\ud800"}`,
		`{"name":"comment-posted","to":"fz","transactionId":"` + repeat("x", 300) + `"}`,
		`{"name":"comment-posted","to":"fz","payload":{"a":` + repeat(`{"a":`, 40) + `1` + repeat(`}`, 40) + `}}`,
		`{"name":"nope","to":"fz"}`, `{`, `[]`, `null`, ``, `{"name":"comment-posted","to":"fz"} {}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		res := fuzzCheck(t, h, "POST", "/v1/events/trigger", "", body)
		if res.Status == 201 {
			require.Equal(t, true, res.Object(t)["acknowledged"], "%s", res.Raw)
			// Whatever was accepted, the workers run it without an error.
			drain(t, eng)
		}
	})
}

func FuzzFeedPayloadFilter(f *testing.F) {
	h := newHarness(f, "sqlite")
	dev := h.authFor(asDev)
	eng := h.newEngine(engine.Options{})
	h.createWorkflow(f, dev, plainWorkflow("Plain"))
	for _, p := range []map[string]any{
		{"n": 1, "kind": "a", "meta": map[string]any{"city": "Paris", "tags": []string{"x"}}},
		{"n": 2.5, "kind": "b", "flag": true, "nothing": nil},
		{"n": "3", "kind": "a.b", "weird key": map[string]any{"[0]": "$"}},
	} {
		h.trigger(f, dev, map[string]any{"name": "plain", "to": "fzf", "payload": p})
	}
	drain(f, eng)
	std, raw := base64.StdEncoding.EncodeToString, base64.RawURLEncoding.EncodeToString
	for _, seed := range []string{
		std([]byte(`{"kind":"a"}`)), raw([]byte(`{"kind":"a"}`)), std([]byte(`{"meta":{"city":"Paris"}}`)),
		std([]byte(`{"n":1.0}`)), std([]byte(`{"n":"3"}`)), std([]byte(`{"flag":true,"nothing":null}`)),
		std([]byte(`{"meta":{"tags":["x"]}}`)), std([]byte(`{"meta":{}}`)), std([]byte(`{}`)), std([]byte(`{"weird key":{"[0]":"$"}}`)),
		std([]byte(`{"kind.b":1}`)), std([]byte(`{"a\"b":1}`)), std([]byte(`{"":1}`)), std([]byte(`{"a":"\u0000"}`)),
		std([]byte(`{"n":1e999}`)), std([]byte(`{"n":-0}`)), std([]byte(`{"n":12345678901234567890}`)),
		std([]byte(`[1]`)), std([]byte(`null`)), std([]byte(`"x"`)), std([]byte(`{"a":1} x`)),
		"", "=", "====", "!!", "e30", "e30=", "e30==", "e30===", "%", "eyJ", repeat("A", 9000),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, payload string) {
		res := fuzzCheck(t, h, "GET", feedPath("fzf", nil), "payload="+url.QueryEscape(payload), nil)
		if res.Status == 200 {
			page := res.Object(t)
			require.LessOrEqual(t, len(page["data"].([]any)), 3)
			require.EqualValues(t, len(page["data"].([]any)), page["totalCount"])
		}
	})
}
