package httpapi_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/bridge"
	"github.com/herald-notify/herald/internal/engine"
	"github.com/herald-notify/herald/internal/httpapi"
	"github.com/herald-notify/herald/internal/netguard"
	"github.com/herald-notify/herald/internal/provider/email/sendgrid/sendgridfake"
	"github.com/herald-notify/herald/internal/provider/providertest"
	"github.com/herald-notify/herald/internal/sandbox"
	"github.com/herald-notify/herald/internal/webhooks"
)

// eventSink is a local endpoint that checks each event's signature and
// keeps its body.
type eventSink struct {
	*httptest.Server
	t      *testing.T
	secret string
	mu     sync.Mutex
	events []map[string]any
}

func newEventSink(t *testing.T) *eventSink {
	s := &eventSink{t: t}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		defer s.mu.Unlock()
		key, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(s.secret, "whsec_"))
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte(r.Header.Get("webhook-id") + "." + r.Header.Get("webhook-timestamp") + "."))
		mac.Write(body)
		if r.Header.Get("webhook-signature") != "v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil)) {
			t.Errorf("a webhook whose signature does not verify: %s", body)
		}
		var ev map[string]any
		if err := json.Unmarshal(body, &ev); err != nil {
			t.Errorf("a webhook body that is not JSON: %s", body)
		}
		s.events = append(s.events, ev)
	}))
	t.Cleanup(s.Close)
	return s
}

// find waits for an event of type typ whose data.object has the given
// field value ("" field: any) and returns its data.
func (s *eventSink) find(typ, field string, value any) map[string]any {
	s.t.Helper()
	var found map[string]any
	require.Eventually(s.t, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, ev := range s.events {
			data, _ := ev["data"].(map[string]any)
			obj, _ := data["object"].(map[string]any)
			if ev["type"] == typ && (field == "" || obj[field] == value) {
				found = data
				return true
			}
		}
		return false
	}, 10*time.Second, 5*time.Millisecond, "no %s event with %s = %v; got %v", typ, field, value, s.types())
	return found
}

// count counts the events of type typ whose data.object has the field value.
func (s *eventSink) count(typ, field string, value any) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, ev := range s.events {
		data, _ := ev["data"].(map[string]any)
		obj, _ := data["object"].(map[string]any)
		if ev["type"] == typ && obj[field] == value {
			n++
		}
	}
	return n
}

func (s *eventSink) types() []any {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []any
	for _, ev := range s.events {
		out = append(out, ev["type"])
	}
	return out
}

// runWebhooks runs svc's outbox drain and sender until the test ends.
func runWebhooks(t *testing.T, svc *webhooks.Service) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); svc.Run(ctx) }()
	go func() { defer wg.Done(); svc.Send(ctx) }()
	t.Cleanup(func() { cancel(); wg.Wait() })
}

// hookUp serves the harness with a webhooks service as herald serve wires
// it — the store's outbox, its drain and the sender running — and
// gives the development environment an endpoint at a sink taking every
// event.
func hookUp(t *testing.T, h *harness) *eventSink {
	t.Helper()
	log := testLogger(t)
	svc := webhooks.New(webhooks.Options{Store: h.DB, Logger: log, AllowPrivateNetworks: true, Schedule: []time.Duration{0},
		Poll: 20 * time.Millisecond})
	h.Handler = httpapi.New(httpapi.Options{Store: h.DB, Keys: h.Keys, Logger: log, Metrics: h.Metrics,
		Bridge: bridge.New(bridge.Options{Dialer: &netguard.Dialer{AllowPrivate: true}}), OnTrigger: func() { h.Wakes.Add(1) },
		Webhooks: svc})
	svc.Outbox(h.DB)
	runWebhooks(t, svc)
	sink := newEventSink(t)
	e := h.createWebhookEndpoint(t, h.authFor(asDev), map[string]any{"url": sink.URL + "/events"})
	sink.secret = e["secret"].(string)
	return sink
}

// TestWebhookEvents: each emission point sends its event, in the
// contract's data: workflows (created, updated by PUT and PATCH, synced,
// deleted), in-app messages created at trigger time and by a worker (sent,
// delivered), e-mails accepted and failed, inbox changes through the v1,
// v2 and /v1/inbox routes, bulk ones included, deletions, and preferences.
func TestWebhookEvents(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		sink := hookUp(t, h)
		dev := h.authFor(asDev)
		h.DB.SetTriggerPlanner(engine.InAppPlanner(sandbox.New(sandbox.DefaultLimits), h.DB))

		// Workflows.
		made := h.createWorkflow(t, dev, map[string]any{"name": "Hooks", "workflowId": "hooks", "steps": stepsOf("in_app")})
		data := sink.find("workflow.created", "workflowId", "hooks")
		got := h.call(t, dev, "GET", "/v2/workflows/hooks", nil, nil).Object(t)
		require.Equal(t, got, data["object"], "the workflow as GET answers it")
		require.Equal(t, made["_id"], got["_id"])
		res := h.call(t, dev, "PUT", "/v2/workflows/hooks", map[string]any{"name": "Hooks v2", "workflowId": "hooks",
			"steps": stepsOf("in_app")}, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		data = sink.find("workflow.updated", "name", "Hooks v2")
		require.Equal(t, "Hooks", data["previousObject"].(map[string]any)["name"])
		res = h.call(t, dev, "PATCH", "/v2/workflows/hooks", map[string]any{"name": "Hooks v3"}, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		data = sink.find("workflow.updated", "name", "Hooks v3")
		require.Equal(t, "Hooks v2", data["previousObject"].(map[string]any)["name"])
		res = h.call(t, dev, "PUT", "/v2/workflows/hooks/sync", map[string]any{"targetEnvironmentId": h.envID(t, "production")}, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		data = sink.find("workflow.published", "workflowId", "hooks")
		require.Equal(t, res.Object(t), data["object"], "the target's workflow")
		require.Equal(t, made["_id"], data["previousObject"].(map[string]any)["_id"], "the source's")
		require.NotEqual(t, made["_id"], data["object"].(map[string]any)["_id"])

		// An in-app message created with the trigger: sent, then delivered.
		h.createSubscriber(t, dev, map[string]any{"subscriberId": "ada", "firstName": "Ada", "email": "ada@example.com"})
		h.trigger(t, dev, map[string]any{"name": "hooks", "to": "ada", "transactionId": "tx-hooks"})
		items := h.feedItems(t, "ada")
		require.Len(t, items, 1)
		mid := items[0]["_id"].(string)
		sent := sink.find("message.sent", "_id", mid)["object"].(map[string]any)
		delivered := sink.find("message.delivered", "_id", mid)["object"].(map[string]any)
		require.Equal(t, sent, delivered)
		require.Equal(t, "ada", sent["subscriberId"], "the subscriber's own id")
		require.Equal(t, "hooks", sent["workflowId"])
		require.Equal(t, "hooks", sent["templateIdentifier"])
		require.Equal(t, made["_id"], sent["_templateId"])
		require.Equal(t, "tx-hooks", sent["transactionId"])
		require.Equal(t, "in_app", sent["channel"])
		require.Equal(t, "sent", sent["status"])
		require.Equal(t, false, sent["read"])
		for _, k := range []string{"_id", "_templateId", "_environmentId", "_organizationId", "_notificationId", "subscriberId",
			"templateIdentifier", "workflowId", "transactionId", "channel", "seen", "read", "archived", "deliveredAt", "providerId",
			"status", "createdAt", "updatedAt"} {
			require.Contains(t, sent, k)
		}

		// E-mail through a provider (a worker), then the in-app step it
		// queues: created by the worker.
		f := sendgridfake.New()
		defer f.Close()
		h.sendgridIntegration(t, f, "mail")
		h.createWorkflow(t, dev, emailWorkflow("mailer"))
		eng := h.newEngine(engine.Options{Delivery: engine.DeliveryOptions{AllowPrivateNetworks: true}})
		h.trigger(t, dev, map[string]any{"name": "mailer", "to": "ada", "transactionId": "tx-mail", "payload": map[string]any{"id": 1}})
		drain(t, eng)
		mails := objects(t, h.messages(t, map[string][]string{"transactionId": {"tx-mail"}, "channel": {"email"}})["data"])
		require.Len(t, mails, 1)
		mail := sink.find("message.sent", "_id", mails[0]["_id"])["object"].(map[string]any)
		require.Equal(t, "email", mail["channel"])
		require.Equal(t, "sendgrid", mail["providerId"])
		require.Zero(t, sink.count("message.delivered", "_id", mails[0]["_id"]), "an e-mail is delivered when its provider says so")
		later := objects(t, h.messages(t, map[string][]string{"transactionId": {"tx-mail"}, "channel": {"in_app"}})["data"])
		require.Len(t, later, 1)
		sink.find("message.sent", "_id", later[0]["_id"])
		sink.find("message.delivered", "_id", later[0]["_id"])
		f.Fail(providertest.Rejected, 1)
		h.trigger(t, dev, map[string]any{"name": "mailer", "to": "ada", "transactionId": "tx-rejected", "payload": map[string]any{"id": 2}})
		drain(t, eng)
		rejected := objects(t, h.messages(t, map[string][]string{"transactionId": {"tx-rejected"}, "channel": {"email"}})["data"])
		require.Len(t, rejected, 1)
		data = sink.find("message.failed", "_id", rejected[0]["_id"])
		require.Equal(t, "error", data["object"].(map[string]any)["status"])
		require.Contains(t, data["object"].(map[string]any)["errorText"], "Does not contain a valid address")
		require.Contains(t, data["error"].(map[string]any)["message"], "Does not contain a valid address")
		require.Zero(t, sink.count("message.sent", "_id", rejected[0]["_id"]), "no message.sent for a failed message")

		// Inbox changes, through each family of routes.
		markAs := func(mark string) {
			res := h.call(t, dev, "POST", "/v1/subscribers/ada/messages/mark-as", map[string]any{"messageId": mid, "markAs": mark}, nil)
			require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
		}
		markAs("read")
		require.Equal(t, true, sink.find("message.read", "_id", mid)["object"].(map[string]any)["read"], "as after the change")
		markAs("unread")
		require.Equal(t, false, sink.find("message.unread", "_id", mid)["object"].(map[string]any)["read"])
		markAs("seen")
		sink.find("message.seen", "_id", mid)
		v2 := func(action string, body any) {
			res := h.call(t, dev, "PATCH", "/v2/subscribers/ada/notifications/"+mid+"/"+action, body, nil)
			require.Equal(t, http.StatusOK, res.Status, "%s: %s", action, res.Raw)
		}
		v2("archive", nil)
		archived := sink.find("message.archived", "_id", mid)["object"].(map[string]any)
		require.Equal(t, true, archived["archived"])
		require.NotEmpty(t, archived["archivedAt"])
		v2("unarchive", nil)
		sink.find("message.unarchived", "_id", mid)
		v2("snooze", map[string]any{"snoozeUntil": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})
		require.NotEmpty(t, sink.find("message.snoozed", "_id", mid)["object"].(map[string]any)["snoozedUntil"])
		v2("unsnooze", nil)
		sink.find("message.unsnoozed", "_id", mid)
		token := h.openSession(t, h.identifierOf(t, dev), h.DevKey, map[string]any{"subscriberId": "ada"})["token"].(string)
		res = h.call(t, "Bearer "+token, "PATCH", "/v1/inbox/notifications/"+mid+"/unread", nil, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		require.Equal(t, 2, waitCount(t, sink, "message.unread", mid, 2))
		// Bulk: every unread message read (mid and the worker's one).
		res = h.call(t, dev, "POST", "/v2/subscribers/ada/notifications/read", map[string]any{}, nil)
		require.Equal(t, http.StatusNoContent, res.Status, "%s", res.Raw)
		require.Equal(t, 2, waitCount(t, sink, "message.read", mid, 2))
		sink.find("message.read", "_id", later[0]["_id"])
		res = h.call(t, dev, "POST", "/v1/subscribers/ada/messages/mark-all", map[string]any{"markAs": "seen"}, nil)
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)

		// Deletions, one, by transaction, in bulk.
		res = h.call(t, dev, "DELETE", "/v1/messages/"+mails[0]["_id"].(string), nil, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		sink.find("message.deleted", "_id", mails[0]["_id"])
		res = h.call(t, "Bearer "+token, "DELETE", "/v1/inbox/notifications/"+mid+"/delete", nil, nil)
		require.Equal(t, http.StatusNoContent, res.Status, "%s", res.Raw)
		sink.find("message.deleted", "_id", mid)
		res = h.call(t, dev, "DELETE", "/v1/messages/transaction/tx-rejected", nil, nil)
		require.Equal(t, http.StatusNoContent, res.Status, "%s", res.Raw)
		sink.find("message.deleted", "_id", rejected[0]["_id"])
		res = h.call(t, dev, "POST", "/v2/subscribers/ada/notifications/delete", map[string]any{}, nil)
		require.Equal(t, http.StatusNoContent, res.Status, "%s", res.Raw)
		sink.find("message.deleted", "_id", later[0]["_id"])

		// Preferences: global, one workflow's, bulk, and the inbox routes.
		res = h.call(t, dev, "PATCH", prefsPath("ada", ""), map[string]any{"channels": map[string]any{"email": false}}, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		data = sink.find("preference.updated", "level", "global")
		require.Equal(t, "ada", data["subscriberId"])
		require.Equal(t, false, data["object"].(map[string]any)["channels"].(map[string]any)["email"])
		res = h.call(t, dev, "PATCH", prefsPath("ada", ""), map[string]any{"workflowId": "mailer", "channels": map[string]any{"in_app": false}}, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		data = sink.find("preference.updated", "level", "template")
		require.Equal(t, "mailer", data["object"].(map[string]any)["workflow"].(map[string]any)["identifier"])
		require.Equal(t, false, data["object"].(map[string]any)["channels"].(map[string]any)["in_app"])
		res = h.call(t, "Bearer "+token, "PATCH", "/v1/inbox/preferences", map[string]any{"sms": false}, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		require.Eventually(t, func() bool { return sink.count("preference.updated", "level", "global") == 2 }, 10*time.Second, 5*time.Millisecond)
		res = h.call(t, dev, "PATCH", prefsPath("ada", "/bulk"), map[string]any{"preferences": []any{
			map[string]any{"workflowId": "hooks", "channels": map[string]any{"in_app": true}}}}, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		require.Eventually(t, func() bool { return sink.count("preference.updated", "level", "template") == 2 }, 10*time.Second, 5*time.Millisecond)

		// A deleted workflow, as it was.
		res = h.call(t, dev, "DELETE", "/v2/workflows/hooks", nil, nil)
		require.Equal(t, http.StatusNoContent, res.Status, "%s", res.Raw)
		require.Equal(t, made["_id"], sink.find("workflow.deleted", "workflowId", "hooks")["object"].(map[string]any)["_id"])

		// Every event's envelope.
		sink.mu.Lock()
		defer sink.mu.Unlock()
		identifier := h.identifierOf(t, dev)
		seen := map[any]bool{}
		for _, ev := range sink.events {
			require.Equal(t, identifier, ev["environmentId"])
			require.Regexp(t, `^evt_[A-Za-z0-9]+$`, ev["id"])
			require.False(t, seen[ev["id"]], "one id per event")
			seen[ev["id"]] = true
			typ := ev["type"].(string)
			want := strings.Split(typ, ".")[0]
			require.Equal(t, want, ev["object"], typ)
			_, err := time.Parse(time.RFC3339, ev["timestamp"].(string))
			require.NoError(t, err)
		}
		require.NotContains(t, logsOf(t), sink.secret[6:], "a secret is never logged")
		require.Equal(t, 0, h.count(t, fmt.Sprintf("SELECT count(*) FROM webhook_events WHERE environment_id = '%s'", h.envID(t, "production"))),
			"production has no endpoint: its events cost nothing")
	})
}

// waitCount waits until the sink has n events of typ about message id.
func waitCount(t *testing.T, sink *eventSink, typ, id string, n int) int {
	t.Helper()
	require.Eventually(t, func() bool { return sink.count(typ, "_id", id) >= n }, 10*time.Second, 5*time.Millisecond,
		"%d %s events about %s", n, typ, id)
	return sink.count(typ, "_id", id)
}
