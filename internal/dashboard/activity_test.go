package dashboard_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestActivity: the environment's triggers, newest first, with a status
// from their jobs, filtered by workflow, subscriber, transaction id,
// channel and status (on the server, with paging); bad filters are 422s.
func TestActivity(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f *fixture) {
		tok := f.signIn()
		rec := f.do(req{method: "POST", path: "/dashboard/api/env/development/v2/workflows", cookie: tok,
			body: `{"name":"Hello","workflowId":"hello","steps":[{"name":"Inbox","type":"in_app","controlValues":{"body":"hi"}}]}`})
		require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
		var txs []string
		for _, to := range []string{"ada", "bob"} {
			rec = f.do(req{method: "POST", path: "/dashboard/api/env/development/v1/events/trigger", cookie: tok,
				body: `{"name":"hello","to":"` + to + `"}`})
			require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
			var res struct {
				TransactionID string `json:"transactionId"`
			}
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &res))
			txs = append(txs, res.TransactionID)
		}
		type row struct {
			TransactionID, WorkflowID, WorkflowName, SubscriberID, Status string
			Channels                                                      []string
		}
		list := func(query string) []row {
			t.Helper()
			rec := f.do(req{method: "GET", path: "/dashboard/api/env/development/activity?" + query, cookie: tok})
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			var out struct {
				Data []row `json:"data"`
			}
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
			return out.Data
		}
		all := list("")
		require.Len(t, all, 2)
		require.Equal(t, txs[1], all[0].TransactionID, "newest first")
		require.Equal(t, "bob", all[0].SubscriberID)
		require.Equal(t, "hello", all[0].WorkflowID)
		require.Equal(t, "Hello", all[0].WorkflowName)
		require.Equal(t, []string{"in_app"}, all[0].Channels)
		require.Equal(t, "in progress", all[0].Status, "no worker ran")

		require.Len(t, list("subscriberId=ada"), 1)
		require.Len(t, list("transactionId="+txs[0]), 1)
		require.Len(t, list("workflow=hello&channel=in_app"), 2)
		require.Empty(t, list("channel=email"))
		require.Len(t, list("status="+url.QueryEscape("in progress")), 2)
		require.Empty(t, list("status=completed"))
		require.Empty(t, list("workflow=nope"))
		require.Empty(t, list("status="+url.QueryEscape("in progress")+"&page=1"), "the status filter pages on the server")

		// Canceled: the store sums the jobs up, and filters by it.
		rec = f.do(req{method: "DELETE", path: "/dashboard/api/env/development/v1/events/trigger/" + txs[0], cookie: tok})
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		canceled := list("status=canceled")
		require.Len(t, canceled, 1)
		require.Equal(t, txs[0], canceled[0].TransactionID)
		require.Equal(t, "canceled", canceled[0].Status)
		progress := list("status=" + url.QueryEscape("in progress"))
		require.Len(t, progress, 1)
		require.Equal(t, txs[1], progress[0].TransactionID)

		for _, bad := range []string{"channel=fax", "status=done", "page=-1", "page=x", "page=10001", "subscriberId=%00"} {
			requireError(t, f.do(req{method: "GET", path: "/dashboard/api/env/development/activity?" + bad, cookie: tok}),
				http.StatusUnprocessableEntity)
		}
		rec = f.do(req{method: "GET", path: "/dashboard/api/env/production/activity", cookie: tok})
		require.Equal(t, http.StatusOK, rec.Code)
		require.JSONEq(t, `{"data":[],"hasMore":false}`, rec.Body.String(), "another environment's triggers are not listed")
	})
}
