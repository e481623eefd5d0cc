package dashboard_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNoInputMakesA5xx: every route of the dashboard, signed in, with
// bodies and path values that are not what it takes, answers a 4xx (or a
// 2xx where the input is acceptable), never a 5xx, on both stores. A
// workflow "x" with a step "y" exists, so that a preview's bad step (saved
// or sent whole) reaches the checks past the workflow's look-up.
func TestNoInputMakesA5xx(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f *fixture) {
		tok := f.signIn()
		rec := f.do(req{method: "POST", path: "/dashboard/api/env/development/v2/workflows", cookie: tok,
			body: `{"name":"X","workflowId":"x","steps":[{"name":"Y","type":"in_app","controlValues":{"body":"b"}}]}`})
		require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
		bodies := []string{"", "{", "null", "[]", `"text"`, `{"workflowId":{"a":1},"stepId":[1]}`, "{\"to\":\"\xff\"}",
			`{"to":"a\u0000b"}`, `{"controlValues":{"a":"{{"},"workflowId":"x","stepId":"y"}`, strings.Repeat("[", 10_000),
			`{"email":"` + strings.Repeat("é", 5000) + `","password":"x"}`, `{"payload":{"a":` + strings.Repeat("[", 100) + `}}`,
			`{"workflowId":"x","step":"in_app"}`, `{"workflowId":"x","step":{"type":"fax"}}`, `{"workflowId":"x","step":{"type":["in_app"]}}`,
			`{"workflowId":"x","step":{"type":"in_app","controlValues":[1]}}`, `{"workflowId":"x","step":{"type":"email","controlValues":{"skip":{"frobnicate":[1]}}}}`,
			`{"workflowId":"x","step":{"type":"digest","controlValues":{"lookBackWindow":{"amount":"{{","unit":7},"cron":"x"}}}}`,
			`{"workflowId":"x","step":{"type":"http_request","controlValues":{"url":"javascript:x","headers":[{"key":"\n"}],"responseBodySchema":{"type":7}}}}`,
			`{"workflowId":"x","step":{"type":"throttle","controlValues":{"type":"dynamic","threshold":-1,"throttleKey":[]}}}`,
			`{"workflowId":"x","step":{"type":"in_app","controlValues":{"skip":` + strings.Repeat(`{"and":[`, 60) + `true` + strings.Repeat(`]}`, 60) + `}}}`,
			`{"workflowId":"x","stepId":"y","controlValues":{"skip":{"==":[1]}},"step":{"type":"sms"}}`, `{"workflowId":"x","stepId":"y","controlValues":{"skip":{"var":[]}}}`,
			`{"workflowId":"x","step":{"type":"email","controlValues":{"body":"{{ content","layoutId":"nope"}}}`}
		paths := []string{
			"/dashboard/api/session", "/dashboard/api/providers",
			"/dashboard/api/env/development/preview", "/dashboard/api/env/development/activity?status=%ff&workflow=%00",
			"/dashboard/api/env/development/activity?page=99999999999999999999",
			"/dashboard/api/env/development/api-keys", "/dashboard/api/env/development/api-keys/%ff",
			"/dashboard/api/env/development/integrations/%00/test", "/dashboard/api/env/development/integrations/000000000000000000000000/test",
			"/dashboard/api/env/%ff/v2/subscribers", "/dashboard/api/env/development/v2/subscribers/%ff%fe",
			"/dashboard/api/env/development/v2/workflows/%00", "/dashboard/api/env/development/v1/events/trigger",
			"/dashboard/api/env/development/..%2f..%2fhealth", "/dashboard/assets/%00", "/dashboard/api/%ff",
			"/dashboard/api/env/development/analytics?days=%ff", "/dashboard/api/env/development/analytics?days=99999999999999999999",
			"/dashboard/api/webhook-event-types", "/dashboard/api/env/development/v2/webhooks/endpoints",
			"/dashboard/api/env/development/v2/webhooks/endpoints/%ff/deliveries",
		}
		for _, p := range paths {
			for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
				for _, b := range bodies {
					if m == "GET" && b != "" {
						continue
					}
					if p == "/dashboard/api/session" && m == "DELETE" {
						continue // signing out would end the test's session
					}
					rec := f.do(req{method: m, path: p, body: b, cookie: tok})
					require.Less(t, rec.Code, 500, "%s %s %.60q: %s", m, p, b, rec.Body.String())
				}
			}
		}
	})
}
