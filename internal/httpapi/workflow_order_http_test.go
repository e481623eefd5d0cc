package httpapi_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// jsonKeys is the order of a JSON object's top-level keys.
func jsonKeys(t testing.TB, raw json.RawMessage) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	require.NoError(t, err)
	require.Equal(t, json.Delim('{'), tok, "%s", raw)
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		require.NoError(t, err)
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		require.NoError(t, dec.Decode(&skip))
	}
	return keys
}

// stepControls are the raw controlValues and controls.values of a
// workflow's (or a step's) answer.
func stepControls(t testing.TB, raw []byte, inWorkflow bool) (values, shown json.RawMessage) {
	t.Helper()
	type step struct {
		ControlValues json.RawMessage `json:"controlValues"`
		Controls      struct {
			Values json.RawMessage `json:"values"`
		} `json:"controls"`
	}
	var st step
	if inWorkflow {
		var wf struct{ Steps []step }
		require.NoError(t, json.Unmarshal(raw, &wf))
		require.NotEmpty(t, wf.Steps)
		st = wf.Steps[0]
	} else {
		require.NoError(t, json.Unmarshal(raw, &st))
	}
	return st.ControlValues, st.Controls.Values
}

// TestWorkflowControlOrder: a step's controlValues are answered in the
// order they were written (the order rendering uses), by create, GET, PUT,
// the list and the step's GET, so a client saving what it read keeps it.
func TestWorkflowControlOrder(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev := h.authFor(asDev)
		want := []string{"subject", "body", "avatar"}
		res := h.call(t, dev, "POST", "/v2/workflows", `{"name":"Order","workflowId":"order","steps":[{"name":"Inbox","stepId":"inbox",`+
			`"type":"in_app","controlValues":{"subject":"{% assign who = 'Bob' %}Hi","body":"Hello {{who}}","avatar":"https://example.com/a.png"}}]}`, nil)
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
		values, shown := stepControls(t, res.Raw, true)
		require.Equal(t, want, jsonKeys(t, values))
		require.Equal(t, want, jsonKeys(t, shown))

		res = h.call(t, dev, "GET", "/v2/workflows/order", nil, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		values, _ = stepControls(t, res.Raw, true)
		require.Equal(t, want, jsonKeys(t, values))
		res = h.call(t, dev, "GET", "/v2/workflows/order/steps/inbox", nil, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		values, _ = stepControls(t, res.Raw, false)
		require.Equal(t, want, jsonKeys(t, values))

		// What was read, saved again with a new order, is answered in it.
		res = h.call(t, dev, "PUT", "/v2/workflows/order", `{"name":"Order","steps":[{"name":"Inbox","stepId":"inbox","type":"in_app",`+
			`"controlValues":{"avatar":"https://example.com/b.png","body":"Hello","subject":"Hi"}}]}`, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		values, _ = stepControls(t, res.Raw, true)
		require.Equal(t, []string{"avatar", "body", "subject"}, jsonKeys(t, values))
		res = h.call(t, dev, "GET", "/v2/workflows?limit=10", nil, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		var list struct{ Workflows []json.RawMessage }
		require.NoError(t, json.Unmarshal(res.Raw, &list))
		require.Len(t, list.Workflows, 1)
		values, _ = stepControls(t, list.Workflows[0], true)
		require.Equal(t, []string{"avatar", "body", "subject"}, jsonKeys(t, values))
	})
}
