package httpapi_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/engine"
)

// inboxFixture makes an in-app workflow and triggers it: each transaction
// id to its recipients; the engine runs every job.
func inboxFixture(t *testing.T, h *harness, sends map[string][]string) {
	t.Helper()
	dev := h.authFor(asDev)
	h.createWorkflow(t, dev, map[string]any{"name": "notes", "workflowId": "notes", "steps": []any{
		map[string]any{"name": "Inbox", "type": "in_app", "controlValues": map[string]any{"body": "Hi {{subscriber.firstName}}"}}}})
	for tx, to := range sends {
		recipients := make([]any, len(to))
		for i, sid := range to {
			recipients[i] = map[string]any{"subscriberId": sid, "firstName": sid}
		}
		h.trigger(t, dev, map[string]any{"name": "notes", "to": recipients, "transactionId": tx})
	}
	drain(t, h.newEngine(engine.Options{}))
}

func transactionsOf(t *testing.T, page map[string]any) []string {
	var out []string
	for _, m := range objects(t, page["data"]) {
		out = append(out, m["transactionId"].(string))
	}
	return out
}

func TestMessagesListFiltersHTTP(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		inboxFixture(t, h, map[string][]string{"tx,with comma": {"ada"}, " padded ": {"ada", " ada"}, "plain": {" ada"}})

		for _, c := range []struct {
			name  string
			query url.Values
			want  []string
		}{
			{"a transaction id with a comma, whole", url.Values{"transactionId": {"tx,with comma"}}, []string{"tx,with comma"}},
			{"a transaction id with spaces, whole", url.Values{"transactionId": {" padded "}}, []string{" padded ", " padded "}},
			{"repeated", url.Values{"transactionId": {"plain", "tx,with comma"}}, []string{"plain", "tx,with comma"}},
			{"with []", url.Values{"transactionId[]": {"plain"}}, []string{"plain"}},
			{"a subscriberId with a leading space, exactly", url.Values{"subscriberId": {" ada"}}, []string{"plain", " padded "}},
			{"the other subscriber", url.Values{"subscriberId": {"ada"}, "transactionId": {" padded "}}, []string{" padded "}},
			{"contextKeys: Herald's messages have none", url.Values{"contextKeys": {"tenant:a"}}, nil},
			{"the tool channel: none", url.Values{"channel": {"tool"}}, nil},
			{"in_app", url.Values{"channel": {"in_app"}, "subscriberId": {"ada"}}, []string{" padded ", "tx,with comma"}},
		} {
			page := h.messages(t, c.query)
			require.ElementsMatch(t, c.want, transactionsOf(t, page), c.name)
			require.EqualValues(t, len(c.want), page["totalCount"], c.name)
		}

		first := h.messages(t, url.Values{"limit": {"2"}})
		require.Equal(t, true, first["hasMore"])
		require.EqualValues(t, 2, first["pageSize"])
		last := h.messages(t, url.Values{"limit": {"2"}, "page": {"1"}})
		require.Equal(t, false, last["hasMore"])
		require.Len(t, objects(t, last["data"]), 2)
		require.EqualValues(t, 4, last["totalCount"])

		for _, q := range []string{"channel=fax", "limit=1001", "limit=0", "page=-1", "subscriberId=" + strings.Repeat("a", 257)} {
			require.Equal(t, http.StatusUnprocessableEntity, h.call(t, h.authFor(asDev), "GET", "/v1/messages?"+q, nil, nil).Status, q)
		}
	})
}

func TestMessagesDeleteByTransactionHTTP(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		dev, prod := h.authFor(asDev), h.authFor(asProd)
		inboxFixture(t, h, map[string][]string{"tx-a": {"ada", "bob"}, "tx-b": {"ada"}})
		unseen := func(sid string) float64 {
			res := h.call(t, dev, "GET", "/v1/subscribers/"+sid+"/notifications/unseen", nil, nil)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
			return res.Object(t)["count"].(float64)
		}
		require.Equal(t, 2.0, unseen("ada"))
		require.Equal(t, 1.0, unseen("bob"))

		for _, c := range []struct {
			name, auth, path string
			status           int
		}{
			{"unknown transaction", dev, "/v1/messages/transaction/tx-nope", 404},
			{"a channel the transaction has none of", dev, "/v1/messages/transaction/tx-a?channel=email", 404},
			{"the tool channel", dev, "/v1/messages/transaction/tx-a?channel=tool", 404},
			{"another environment", prod, "/v1/messages/transaction/tx-a", 404},
			{"an unknown channel", dev, "/v1/messages/transaction/tx-a?channel=fax", 422},
			{"a transaction id over 256 characters", dev, "/v1/messages/transaction/" + strings.Repeat("x", 257), 422},
		} {
			res := h.call(t, c.auth, "DELETE", c.path, nil, nil)
			require.Equal(t, c.status, res.Status, "%s: %s", c.name, res.Raw)
			if c.status == 404 {
				require.Equal(t, "Invalid transactionId or channel", res.Object(t)["message"], c.name)
			}
		}
		require.Equal(t, 2.0, unseen("ada"), "refused deletions changed nothing")

		res := h.call(t, dev, "DELETE", "/v1/messages/transaction/tx-a?channel=in_app", nil, nil)
		require.Equal(t, http.StatusNoContent, res.Status, "%s", res.Raw)
		require.Empty(t, res.Raw)
		require.Equal(t, 1.0, unseen("ada"))
		require.Equal(t, 0.0, unseen("bob"))
		require.Equal(t, []string{"tx-b"}, transactionsOf(t, h.messages(t, url.Values{})), "only the other transaction's message is left")
		feed := h.feed(t, "ada", nil)
		require.EqualValues(t, 1, feed["totalCount"])
		require.Equal(t, "tx-b", objects(t, feed["data"])[0]["transactionId"])
		require.Empty(t, objects(t, h.feed(t, "bob", nil)["data"]))

		res = h.call(t, dev, "DELETE", "/v1/messages/transaction/tx-a", nil, nil)
		require.Equal(t, http.StatusNotFound, res.Status, "nothing left: %s", res.Raw)
	})
}
