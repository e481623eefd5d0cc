package dashboard_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestControlOrderSurvivesSave: a step's controls keep the order they were
// written through the dashboard's create → GET → PUT (the page saves the
// controls it read, in the order the API answered them), so a control that
// assigns a variable still renders before the one that reads it.
func TestControlOrderSurvivesSave(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f *fixture) {
		tok := f.signIn()
		call := func(method, path, body string, want int) []byte {
			t.Helper()
			rec := f.do(req{method: method, path: "/dashboard/api/env/development" + path, body: body, cookie: tok})
			require.Equal(t, want, rec.Code, rec.Body.String())
			return rec.Body.Bytes()
		}
		controls := func(raw []byte) json.RawMessage {
			t.Helper()
			var wf struct {
				Steps []struct {
					ControlValues json.RawMessage `json:"controlValues"`
				} `json:"steps"`
			}
			require.NoError(t, json.Unmarshal(raw, &wf))
			return wf.Steps[0].ControlValues
		}
		keys := func(raw json.RawMessage) []string {
			t.Helper()
			dec := json.NewDecoder(bytes.NewReader(raw))
			_, err := dec.Token()
			require.NoError(t, err)
			var out []string
			for dec.More() {
				tok, err := dec.Token()
				require.NoError(t, err)
				out = append(out, tok.(string))
				var skip json.RawMessage
				require.NoError(t, dec.Decode(&skip))
			}
			return out
		}
		call("POST", "/v2/workflows", `{"name":"Order","workflowId":"order","steps":[{"name":"Inbox","stepId":"inbox","type":"in_app",`+
			`"controlValues":{"subject":"{% assign who = 'Bob' %}Hi","body":"Hello {{who}}"}}]}`, http.StatusCreated)
		read := controls(call("GET", "/v2/workflows/order", "", http.StatusOK))
		require.Equal(t, []string{"subject", "body"}, keys(read), "answered in the order written, not alphabetically")

		// The page's Save: the controls as read (edited in place).
		call("PUT", "/v2/workflows/order", `{"name":"Order","workflowId":"order","steps":[{"name":"Inbox","stepId":"inbox","type":"in_app",`+
			`"controlValues":`+string(read)+`}]}`, http.StatusOK)
		after := controls(call("GET", "/v2/workflows/order", "", http.StatusOK))
		require.Equal(t, []string{"subject", "body"}, keys(after), "kept through the save")

		var out map[string]any
		require.NoError(t, json.Unmarshal(call("POST", "/preview", `{"workflowId":"order","stepId":"inbox"}`, http.StatusOK), &out))
		require.Equal(t, "Hello Bob", out["result"].(map[string]any)["body"], "rendered in that order")
	})
}
