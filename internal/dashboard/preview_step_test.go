package dashboard_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPreviewUnsavedStep: the preview renders a step the page holds but has
// not saved (step: {stepId, name, type, controlValues}) as it would send:
// engine.PreviewSend with the workflow's translations and the e-mail's
// layout, the controls in the order sent, a saved step's identifier with
// another type rendered as that type; its controls are checked as a save
// checks them (a 422 naming the control, never a 5xx), and nothing is
// stored.
func TestPreviewUnsavedStep(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f *fixture) {
		tok := f.signIn()
		call := func(method, path, body string, want int) map[string]any {
			t.Helper()
			rec := f.do(req{method: method, path: "/dashboard/api/env/development" + path, body: body, cookie: tok})
			require.Equal(t, want, rec.Code, rec.Body.String())
			var out map[string]any
			if rec.Body.Len() > 0 {
				require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
			}
			return out
		}
		call("POST", "/v2/layouts", `{"layoutId":"brand","name":"Brand"}`, http.StatusCreated)
		call("PUT", "/v2/layouts/brand", `{"name":"Brand","controlValues":{"email":{"editorType":"html",`+
			`"body":"<html><body><h1>{{subscriber.firstName}}</h1>{{ content }}</body></html>"}}}`, http.StatusOK)
		call("POST", "/v2/workflows", `{"name":"Orders","workflowId":"orders","steps":[{"name":"Mail","type":"email",`+
			`"controlValues":{"subject":"Saved","body":"saved"}}]}`, http.StatusCreated)
		call("POST", "/v2/translations", `{"resourceId":"orders","resourceType":"workflow","locale":"en_US",`+
			`"content":{"ready":"Your order is ready"}}`, http.StatusOK)
		preview := func(step string) map[string]any {
			t.Helper()
			out := call("POST", "/preview", `{"workflowId":"orders","payload":{"id":"o-7"},"step":`+step+`}`, http.StatusOK)
			require.Nil(t, out["error"], "%v", out)
			return out["result"].(map[string]any)
		}

		require.Equal(t, map[string]any{"body": "Order o-7", "subject": "Hi Ada"},
			preview(`{"stepId":"bell","name":"Bell","type":"in_app","controlValues":{"subject":"Hi {{subscriber.firstName}}","body":"Order {{payload.id}}"}}`),
			"an in-app step not saved yet, with the payload and the sample subscriber")
		res := preview(`{"stepId":"notice","name":"Notice","type":"email","controlValues":{"subject":"{{t.ready}}","body":"<p>{{payload.id}}</p>","layoutId":"brand"}}`)
		require.Equal(t, "Your order is ready", res["subject"], "the workflow's translations")
		require.Contains(t, res["body"], "<h1>Ada</h1><p>o-7</p>", "wrapped in the layout")
		require.Equal(t, "Hello Bob", preview(`{"type":"sms","controlValues":{"x":"{% assign n = 'Bob' %}","body":"Hello {{n}}"}}`)["body"],
			"the controls in the order sent; stepId and name may be left out")
		require.Equal(t, map[string]any{"body": "saved as sms"}, preview(`{"stepId":"mail","name":"Mail","type":"sms","controlValues":{"body":"saved as sms"}}`),
			"a saved step's identifier with another type renders as that type")
		require.Equal(t, map[string]any{"type": "regular", "amount": float64(5), "unit": "minutes"},
			preview(`{"stepId":"wait","name":"Wait","type":"delay","controlValues":{"type":"regular","amount":5,"unit":"minutes"}}`))
		require.Equal(t, "https://crm.example.com/o-7", preview(`{"type":"http_request","controlValues":{"method":"POST","url":"https://crm.example.com/{{payload.id}}"}}`)["url"])
		require.Equal(t, map[string]any{"body": ""}, preview(`{"type":"chat"}`), "no controls: the type's empty content")
		for _, typ := range []string{"push", "digest", "throttle"} {
			preview(`{"type":"` + typ + `","controlValues":null}`)
		}

		out := call("POST", "/preview", `{"workflowId":"orders","step":{"type":"in_app","controlValues":{"body":"{{ payload.id "}}}`, http.StatusOK)
		require.Nil(t, out["result"])
		require.Equal(t, "body", out["error"].(map[string]any)["field"], "a template's error is shown, not refused")

		saved := call("GET", "/v2/workflows/orders", "", http.StatusOK)
		require.Len(t, saved["steps"], 1, "a preview stores nothing")
		require.Equal(t, "email", saved["steps"].([]any)[0].(map[string]any)["type"])

		for _, bad := range []struct {
			name, body string
			status     int
			message    string
		}{
			{"an unknown type", `{"workflowId":"orders","step":{"type":"fax"}}`, http.StatusUnprocessableEntity, "step.type must be one of in_app"},
			{"no type", `{"workflowId":"orders","step":{"stepId":"x","controlValues":{}}}`, http.StatusUnprocessableEntity, "step.type must be one of"},
			{"controls not an object", `{"workflowId":"orders","step":{"type":"in_app","controlValues":[1]}}`, http.StatusUnprocessableEntity, "step.controlValues must be an object"},
			{"controls as text", `{"workflowId":"orders","step":{"type":"in_app","controlValues":"body"}}`, http.StatusUnprocessableEntity, "step.controlValues must be an object"},
			{"a step not an object", `{"workflowId":"orders","step":"in_app"}`, http.StatusUnprocessableEntity, "expected fields and types"},
			{"a condition the API refuses", `{"workflowId":"orders","step":{"type":"email","controlValues":{"skip":{"frobnicate":[1]}}}}`, http.StatusUnprocessableEntity,
				"step.controlValues.skip is not a valid condition"},
			{"a condition not an object", `{"workflowId":"orders","step":{"type":"email","controlValues":{"skip":true}}}`, http.StatusUnprocessableEntity,
				"step.controlValues.skip must be a JSONLogic object"},
			{"a request without a URL", `{"workflowId":"orders","step":{"type":"http_request","controlValues":{"method":"POST"}}}`, http.StatusUnprocessableEntity,
				"step.controlValues.url is required"},
			{"a throttle's unit", `{"workflowId":"orders","step":{"type":"throttle","controlValues":{"amount":1,"unit":"years"}}}`, http.StatusUnprocessableEntity,
				"step.controlValues.unit must be one of"},
			{"a saved step's edited condition", `{"workflowId":"orders","stepId":"mail","controlValues":{"skip":{"frobnicate":[1]}}}`, http.StatusUnprocessableEntity,
				"controlValues.skip is not a valid condition"},
			{"a step and a stepId", `{"workflowId":"orders","stepId":"mail","step":{"type":"sms"}}`, http.StatusUnprocessableEntity, "not both"},
			{"a step and controlValues", `{"workflowId":"orders","controlValues":{},"step":{"type":"sms"}}`, http.StatusUnprocessableEntity, "not both"},
			{"neither", `{"workflowId":"orders","step":null}`, http.StatusUnprocessableEntity, "Name the workflow"},
			{"a workflow not found", `{"workflowId":"nope","step":{"type":"sms"}}`, http.StatusNotFound, "'nope'"},
			{"another environment's workflow", `{"workflowId":"orders","step":{"type":"sms"}}`, http.StatusNotFound, "'orders'"},
			{"a bad payload", `{"workflowId":"orders","payload":[1],"step":{"type":"sms"}}`, http.StatusUnprocessableEntity, "payload must be an object"},
		} {
			t.Run(bad.name, func(t *testing.T) {
				path := "/dashboard/api/env/development/preview"
				if bad.name == "another environment's workflow" {
					path = "/dashboard/api/env/production/preview"
				}
				rec := f.do(req{method: "POST", path: path, body: bad.body, cookie: tok})
				requireError(t, rec, bad.status)
				require.Contains(t, rec.Body.String(), bad.message)
			})
		}
	})
}
