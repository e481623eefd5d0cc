package httpapi_test

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEdgeText: text and numbers the stores cannot hold alike are a 422
// naming the field wherever they arrive — path, query, body, the feed's
// payload filter — before authentication, and nothing is written.
func TestEdgeText(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		h.createSubscriber(t, h.authFor(asDev), map[string]any{"subscriberId": "edge"})
		h.createWorkflow(t, h.authFor(asDev), plainWorkflow("Edge flow"))
		deep := func(n int) string { return strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n) }
		b64 := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
		runScenarios(t, h, nil, []scenario{
			{name: "path with NUL", method: "DELETE", url: "/v1/events/trigger/a%00", status: 422, errorFields: []string{"transactionId"}},
			{name: "query value not UTF-8", method: "GET", url: "/v2/workflows?query=%FF", status: 422, errorFields: []string{"query"}},
			{name: "query value with NUL", method: "GET", url: "/v1/notifications?transactionId=%00", status: 422,
				errorFields: []string{"transactionId"}},
			{name: "unknown query parameter with NUL", method: "GET", url: "/v2/subscribers?x=%00", status: 422, errorFields: []string{"x"}},
			{name: "query name not UTF-8", method: "GET", url: "/v2/subscribers?%FF=1", status: 422, errorFields: []string{"\uFFFD"}},
			{name: "query value over 16 KiB", method: "GET", url: "/v2/workflows?x=" + repeat("a", 16<<10+1), status: 422, errorFields: []string{"x"}},
			{name: "query value of 16 KiB", method: "GET", url: "/v2/workflows?x=" + repeat("a", 16<<10), status: 200},

			{name: "lone surrogate in a body field", method: "POST", url: "/v2/subscribers", body: `{"subscriberId":"e1","firstName":"\ud800"}`,
				status: 422, errorFields: []string{"firstName"}, contains: []string{`"value":"\\ud800"`}},
			{name: "invalid UTF-8 in a body field", method: "POST", url: "/v2/subscribers", body: "{\"subscriberId\":\"e1\",\"lastName\":\"\xff\"}",
				status: 422, errorFields: []string{"lastName"}},
			{name: "surrogates and numbers inside data", method: "POST", url: "/v2/subscribers",
				body: `{"subscriberId":"e1","data":{"a":[1e400],"b":{"\udc00":1}}}`, status: 422, errorFields: []string{"data"}},
			{name: "a number that rounds to zero", method: "POST", url: "/v2/subscribers", body: `{"subscriberId":"e1","data":{"a":1e-400}}`,
				status: 422, errorFields: []string{"data"}},
			{name: "every offending field named", method: "POST", url: "/v2/subscribers",
				body: `{"subscriberId":"e1\u0000","phone":"\ud83d","data":{"a":1e999}}`, status: 422, errorFields: []string{"subscriberId", "phone", "data"}},
			{name: "body nesting at 64 levels", method: "PATCH", url: "/v2/subscribers/edge", body: `{"data":` + deep(63) + `}`, status: 200},
			{name: "body nesting over 64 levels", method: "PATCH", url: "/v2/subscribers/edge", body: `{"data":` + deep(64) + `}`,
				status: 422, errorFields: []string{"data"}, contains: []string{"makes the body nest deeper than 64 levels"}},
			{name: "an unknown field 10,000 levels deep", method: "POST", url: "/v2/subscribers",
				body: `{"subscriberId":"e1","x":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`, status: 422, errorFields: []string{"x"}},
			{name: "a body 10,000 levels deep", method: "POST", url: "/v2/subscribers", body: strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
				status: 422, errorFields: []string{"body"}},
			{name: "a JSON body the route ignores is checked too", method: "DELETE", url: "/v2/subscribers/nobody", body: `"\u0000"`,
				status: 422, errorFields: []string{"body"}},
			{name: "checked before authentication", method: "POST", url: "/v2/subscribers", auth: asNone, body: `{"subscriberId":"\u0000"}`,
				status: 422, errorFields: []string{"subscriberId"}},

			{name: "trigger payload", method: "POST", url: "/v1/events/trigger", body: `{"name":"edge-flow","to":"e2","payload":{"n":1e131072}}`,
				status: 422, errorFields: []string{"payload"}},
			{name: "trigger overrides and recipient data", method: "POST", url: "/v1/events/trigger",
				body:   `{"name":"edge-flow","to":[{"subscriberId":"e2","data":{"x":"\u0000"}}],"overrides":{"k":"\ud800"},"transactionId":"edge-tx"}`,
				status: 422, errorFields: []string{"to.0.data", "overrides"}},
			{name: "bulk event payload", method: "POST", url: "/v1/events/trigger/bulk",
				body:   `{"events":[{"name":"edge-flow","to":"e2"},{"name":"edge-flow","to":"e2","payload":{"a":{"b":"\udfff"}}}]}`,
				status: 422, errorFields: []string{"events.1.payload"}},
			{name: "step controlValues", method: "POST", url: "/v2/workflows",
				body:   `{"name":"Bad controls","steps":[{"name":"Inbox","type":"in_app","controlValues":{"body":"\ud800"}}]}`,
				status: 422, errorFields: []string{"steps.0.controlValues"}},
			{name: "integration credentials and configurations", method: "POST", url: "/v1/integrations",
				body: `{"providerId":"sendgrid","credentials":{"apiKey":"\ud800","tlsOptions":{"a":[1e400]}},` +
					`"configurations":{"inboundWebhookSigningKey":"\u0000"}}`,
				status: 422, errorFields: []string{"credentials.apiKey", "credentials.tlsOptions", "configurations.inboundWebhookSigningKey"}},

			{name: "feed payload filter with a huge number", method: "GET", url: "/v1/subscribers/edge/notifications/feed?payload=" + b64(`{"a":1e131072}`),
				status: 422, errorFields: []string{"payload"}},
			{name: "feed payload filter with a lone surrogate", method: "GET", url: "/v1/subscribers/edge/notifications/feed?payload=" + b64(`{"a":"\ud800"}`),
				status: 422, errorFields: []string{"payload"}},
			{name: "feed payload filter not UTF-8", method: "GET", url: "/v1/subscribers/edge/notifications/feed?payload=" + b64("{\"a\":\"\xff\"}"),
				status: 422, errorFields: []string{"payload"}},
			{name: "feed payload filter 100 levels deep", method: "GET", url: "/v1/subscribers/edge/notifications/feed?payload=" + b64(deep(100)),
				status: 422, errorFields: []string{"payload"}, contains: []string{"nests deeper than 8 levels"}},
		})
		// A path that is not UTF-8 comes back in the error with U+FFFD for each bad byte.
		for _, c := range []struct{ target, field, shown string }{
			{"/v2/workflows/%FF", "workflowId", "/v2/workflows/\uFFFD"},
			{"/v1/notifications/%ED%A0%80", "notificationId", "/v1/notifications/\uFFFD\uFFFD\uFFFD"},
		} {
			res := h.call(t, h.authFor(asDev), "GET", c.target, nil, nil)
			require.Equal(t, 422, res.Status, "%s", res.Raw)
			require.Equal(t, []string{c.field}, errorFields(t, res))
			require.Equal(t, c.shown, res.Object(t)["path"])
		}
		for _, sid := range []string{"e1", "e2"} {
			require.Equal(t, 404, h.call(t, h.authFor(asDev), "GET", subPath(sid), nil, nil).Status, "nothing of a refused request was written")
		}
		require.Empty(t, objects(t, h.events(t, nil)["data"]), "no event of a refused trigger")
	})
}

// TestRequestIDHeader: a client's X-Request-Id is echoed only when it is 1
// to 64 visible ASCII characters; anything else is replaced by a new id.
func TestRequestIDHeader(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "sqlite")
	for _, c := range []struct{ sent, want string }{
		{"trace-1_a.b:c", "trace-1_a.b:c"}, {"a b", ""}, {"\xff\xfe", ""}, {"a\x00", ""}, {"a\r\nSet-Cookie: x", ""}, {repeat("r", 65), ""},
	} {
		res := h.serve(newRequest(t, "", "GET", "/health", nil, map[string]string{"X-Request-Id": c.sent}))
		got := res.Header.Get("X-Request-Id")
		if c.want != "" {
			require.Equal(t, c.want, got)
		} else {
			require.Regexp(t, `^[0-9a-f]{16}$`, got, "%q replaced", c.sent)
		}
	}
}

// TestListMaximums: every list a client sends has a maximum; beyond it a
// 422 names the list.
func TestListMaximums(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		list := func(v string, n int) string { return strings.TrimSuffix(strings.Repeat(v+",", n), ",") }
		repeated := func(key, v string, n int) string {
			return strings.TrimSuffix(strings.Repeat(key+"="+url.QueryEscape(v)+"&", n), "&")
		}
		condition := `{"type":"GROUP","value":"AND","children":[` + list(`{"field":"f","value":"v","operator":"EQUAL","on":"payload"}`, 20) + `]}`
		unknownKeys := make([]string, 500)
		for i := range unknownKeys {
			unknownKeys[i] = fmt.Sprintf(`"k%d":1`, i)
		}
		runScenarios(t, h, nil, []scenario{
			{name: "100 of each", method: "GET", url: "/v1/notifications?channels=" + list("in_app", 100) + "&templates=" + list("w", 100) +
				"&emails=" + list("a@b.c", 100) + "&" + repeated("subscriberIds", "s", 100), status: 200},
			{name: "101 channels", method: "GET", url: "/v1/notifications?channels=" + list("in_app", 101), status: 422, errorFields: []string{"channels"}},
			{name: "101 templates", method: "GET", url: "/v1/notifications?templates=" + list("w", 101), status: 422, errorFields: []string{"templates"}},
			{name: "101 emails with []", method: "GET", url: "/v1/notifications?" + repeated("emails[]", "a@b.c", 101), status: 422,
				errorFields: []string{"emails"}},
			{name: "101 subscriberIds repeated", method: "GET", url: "/v1/notifications?" + repeated("subscriberIds", "s", 101), status: 422,
				errorFields: []string{"subscriberIds"}},
			{name: "5,000 values", method: "GET", url: "/v1/notifications?subscriberIds=" + list("s", 5000) + "&templates=" + list("w", 5000),
				status: 422, errorFields: []string{"subscriberIds", "templates"}},
			{name: "a subscriberId over 256 characters", method: "GET", url: "/v1/notifications?subscriberIds=a," + repeat("s", 257), status: 422,
				errorFields: []string{"subscriberIds"}},
			{name: "transactionId over 256 characters", method: "GET", url: "/v1/notifications?transactionId=" + repeat("t", 257), status: 422,
				errorFields: []string{"transactionId"}},
			{name: "page beyond 1,000,000", method: "GET", url: "/v1/notifications?page=1000001", status: 422, errorFields: []string{"page"}},
			{name: "page beyond int64", method: "GET", url: "/v1/notifications?page=9223372036854775808", status: 422, errorFields: []string{"page"}},
			{name: "negative offset", method: "GET", url: "/v2/workflows?offset=-1", status: 422, errorFields: []string{"offset"}},

			{name: "20 conditions of 20 children", method: "POST", url: "/v1/integrations",
				body: `{"providerId":"sendgrid","conditions":[` + list(condition, 20) + `]}`, status: 201},
			{name: "21 conditions", method: "POST", url: "/v1/integrations",
				body: `{"providerId":"sendgrid","conditions":[` + list(`{"type":"GROUP","value":"AND"}`, 21) + `]}`, status: 422,
				errorFields: []string{"conditions"}},
			{name: "21 children", method: "POST", url: "/v1/integrations",
				body: `{"providerId":"sendgrid","conditions":[{"type":"GROUP","value":"AND","children":[` +
					list(`{"field":"f","value":"v","operator":"EQUAL","on":"payload"}`, 21) + `]}]}`, status: 422,
				errorFields: []string{"conditions.0.children"}},
			{name: "a child without operator or on", method: "POST", url: "/v1/integrations",
				body: `{"providerId":"sendgrid","conditions":[{"type":"GROUP","value":"AND","children":[{"field":"f"}]}]}`, status: 422,
				errorFields: []string{"conditions.0.children.0.operator", "conditions.0.children.0.on"}},
			{name: "a 422 names at most 100 fields", method: "POST", url: "/v1/integrations",
				body: `{"providerId":"sendgrid","credentials":{` + strings.Join(unknownKeys, ",") + `}}`, status: 422,
				check: func(t *testing.T, res response) { require.Len(t, errorFields(t, res), 100) }},
		})
	})
}

// TestIndexedStrings: strings a store indexes are at most 1,024 bytes, so
// that PostgreSQL can index them: 1,024 characters of UTF-8 may be 4 kB.
func TestIndexedStrings(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		wide := fourByteText(300) // 1,200 bytes
		runScenarios(t, h, nil, []scenario{
			{name: "workflowId over 1,024 bytes", method: "POST", url: "/v2/workflows", body: map[string]any{"name": "W", "workflowId": wide},
				status: 422, errorFields: []string{"workflowId"}},
			{name: "workflowId of 1,024 bytes", method: "POST", url: "/v2/workflows", body: map[string]any{"name": "W", "workflowId": repeat("é", 512)},
				status: 201},
			{name: "a long name's slug is cut", method: "POST", url: "/v2/workflows", body: map[string]any{"name": repeat("\U0001D49C", 1024)},
				status: 201, check: func(t *testing.T, res response) {
					key := res.Object(t)["workflowId"].(string)
					require.LessOrEqual(t, len(key), 1024)
					require.Equal(t, repeat("\U0001D49C", 256), key)
				}},
			{name: "integration identifier over 1,024 bytes", method: "POST", url: "/v1/integrations",
				body: map[string]any{"providerId": "sendgrid", "identifier": wide}, status: 422, errorFields: []string{"identifier"}},
			{name: "e-mail over 1,024 bytes", method: "POST", url: "/v2/subscribers",
				body: map[string]any{"subscriberId": "ix", "email": fourByteText(300) + "@example.com"}, status: 422, errorFields: []string{"email"}},
			{name: "a subscriberId of 256 four-byte characters", method: "POST", url: "/v2/subscribers",
				body: map[string]any{"subscriberId": fourByteText(256)}, status: 201},
		})
	})
}

// TestLongDigestKey: a digest key is a payload value of any length; events
// whose long keys are equal still share a window, and no store refuses it.
func TestLongDigestKey(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		h.createWorkflow(t, dev, map[string]any{"name": "Keyed", "workflowId": "keyed", "steps": []any{
			map[string]any{"name": "Batch", "type": "digest", "controlValues": map[string]any{"amount": 1, "unit": "hours", "digestKey": "k"}},
			map[string]any{"name": "Inbox", "type": "in_app", "controlValues": map[string]any{"body": "{{step.total_count}}"}},
		}})
		long := fourByteText(3000)
		for _, k := range []any{long, long, long + "x", map[string]any{"big": long}} {
			res := h.call(t, dev, "POST", "/v1/events/trigger", map[string]any{"name": "keyed", "to": "dk", "payload": map[string]any{"k": k}}, nil)
			require.Equal(t, 201, res.Status, "%s", res.Raw)
		}
		statuses := map[string]int{}
		for _, n := range objects(t, h.events(t, nil)["data"]) {
			statuses[objects(t, h.event(t, n["_id"].(string))["jobs"])[0]["status"].(string)]++
		}
		require.Equal(t, map[string]int{"delayed": 3, "merged": 1}, statuses, "equal long keys share a window")
	})
}

// TestEdgeLeavesUnknownRoutes: a request no route matches gets its 404 or
// 405 whatever its text.
func TestEdgeLeavesUnknownRoutes(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "sqlite")
	runScenarios(t, h, nil, []scenario{
		{name: "unknown path", method: "GET", url: "/nowhere?x=%00", status: 404},
		{name: "unknown path with NUL", method: "POST", url: "/v3/%00", body: `{"a":"\u0000"}`, status: 404},
		{name: "wrong method", method: "PATCH", url: "/v1/integrations?x=%FF", body: `{"a":1e400}`, status: 405},
	})
}
