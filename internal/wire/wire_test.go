package wire_test

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/wire"
)

var at = time.Date(2031, 3, 14, 15, 9, 26, 535_000_000, time.UTC)

func ptr[T any](v T) *T { return &v }

// bare is an in-app message with nothing optional.
func bare() store.Message {
	return store.Message{ID: "m1", OrganizationID: "o1", EnvironmentID: "e1", NotificationID: "n1", JobID: "j1",
		SubscriberID: "s1", WorkflowID: "w1", TransactionID: "tx", Channel: "in_app", Content: "Hi", Status: "sent",
		CreatedAt: at, UpdatedAt: at.Add(time.Second)}
}

// rich is an in-app message with every optional value.
func rich() store.Message {
	m := bare()
	m.TemplateIdentifier, m.ProviderID, m.Subject, m.Avatar = "welcome", "svc", ptr("Hello"), ptr("https://x.test/a.png")
	m.CTA = store.JSON(`{"type":"redirect","data":{"url":"/a"},"action":{"status":"done","buttons":[` +
		`{"type":"primary","content":"Go","url":"/go"},{"type":"secondary","content":"No"}],"result":{"type":"primary"}}}`)
	m.Actor = store.JSON(`{"type":"user","data":"u"}`)
	m.Payload, m.Overrides, m.Data = store.JSON(`{"p":1}`), store.JSON(`{}`), store.JSON(`{"d":2}`)
	m.Tags, m.Severity = []string{"t"}, "high"
	m.Read, m.Seen, m.LastReadAt, m.LastSeenAt, m.FirstSeenAt = true, true, ptr(at), ptr(at), ptr(at)
	return m
}

var sub = store.Subscriber{ID: "s1", SubscriberID: "u-1", FirstName: ptr("Ada")}

func encode(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	var out map[string]any
	require.NoError(t, json.Unmarshal(b, &out))
	return out
}

func keys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }

var (
	baseKeys   = []string{"_id", "transactionId", "content", "subject", "channel", "read", "seen", "cta", "createdAt"}
	recordKeys = []string{"_templateId", "_environmentId", "_organizationId", "_notificationId", "_subscriberId", "_feedId",
		"templateIdentifier", "providerId", "status", "payload", "overrides"}
	inboxKeys    = []string{"archived", "subscriber", "tags", "data"}
	deliveryKeys = []string{"deliveredAt", "lastReadDate"}
)

func union(lists ...[]string) []string { return slices.Sorted(slices.Values(slices.Concat(lists...))) }

// TestShapes: each v1 shape carries exactly its groups' fields and its own
// (a rich message), and writes a value the message does not have (a bare
// one) as its clients read it: null in the feed item and the realtime
// message, left out of Message.
func TestShapes(t *testing.T) {
	t.Parallel()
	wf := wire.WorkflowOf(store.Workflow{ID: "w1", Key: "welcome", Name: "Welcome"})
	for _, tc := range []struct {
		name   string
		encode func(m *store.Message) any
		keys   []string
		absent []string // of the bare message: left out
		null   []string // of the bare message: null
	}{
		{"feed item", func(m *store.Message) any { return wire.FeedItemOf(m, &sub) },
			union(baseKeys, recordKeys, inboxKeys, []string{"_jobId", "updatedAt", "actor"}),
			[]string{"overrides"}, []string{"subject", "templateIdentifier", "providerId", "_feedId"}},
		{"message", func(m *store.Message) any { return wire.MessageOf(m) },
			union(baseKeys, recordKeys, deliveryKeys, []string{"_messageTemplateId", "lastSeenDate"}),
			[]string{"subject", "templateIdentifier", "providerId", "overrides", "lastReadDate", "lastSeenDate"},
			[]string{"_feedId", "_messageTemplateId"}},
		{"received", func(m *store.Message) any { return wire.ReceivedOf(m, &sub, &wf) },
			union(baseKeys, inboxKeys, deliveryKeys, []string{"snoozedUntil", "firstSeenDate", "archivedAt", "avatar", "workflow",
				"severity"}),
			nil, []string{"subject", "lastReadDate", "snoozedUntil", "firstSeenDate", "archivedAt", "avatar"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := rich()
			require.Equal(t, tc.keys, keys(encode(t, tc.encode(&m))))
			m = bare()
			got := encode(t, tc.encode(&m))
			require.Equal(t, slices.DeleteFunc(slices.Clone(tc.keys), func(k string) bool { return slices.Contains(tc.absent, k) }),
				keys(got))
			for _, k := range tc.null {
				require.Nil(t, got[k], k)
			}
			require.Equal(t, map[string]any{}, got["cta"], "no cta stored: an empty one")
		})
	}
}

// TestSharedFields: the fields two shapes share have one value.
func TestSharedFields(t *testing.T) {
	t.Parallel()
	m := rich()
	wf := wire.WorkflowOf(store.Workflow{ID: "w1", Key: "welcome", Name: "Welcome", Tags: []string{"t"}, Severity: "high"})
	feed, message := encode(t, wire.FeedItemOf(&m, &sub)), encode(t, wire.MessageOf(&m))
	received := encode(t, wire.ReceivedOf(&m, &sub, &wf))
	for _, pair := range [][2]map[string]any{{feed, message}, {feed, received}, {message, received}} {
		for k, v := range pair[0] {
			if w, ok := pair[1][k]; ok {
				require.Equal(t, v, w, k)
			}
		}
	}
	require.Equal(t, map[string]any{"_id": "s1", "subscriberId": "u-1", "firstName": "Ada"}, received["subscriber"])
	require.Equal(t, []any{"2031-03-14T15:09:26.535Z"}, received["deliveredAt"], "delivered when created")
	require.Equal(t, map[string]any{"type": "user", "data": "u"}, feed["actor"])
	require.Equal(t, map[string]any{"id": "w1", "identifier": "welcome", "name": "Welcome", "critical": false,
		"tags": []any{"t"}, "severity": "high"}, received["workflow"])
}

// TestStoredValues: what each mapping does with stored values that are not
// what it writes.
func TestStoredValues(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		edit  func(m *store.Message)
		field string
		want  any
	}{
		{"a cta that is not an object", func(m *store.Message) { m.CTA = store.JSON(`null`) }, "cta", map[string]any{}},
		{"a cta kept as stored", func(m *store.Message) { m.CTA = store.JSON(` {"action":{"status":"done"}}`) }, "cta",
			map[string]any{"action": map[string]any{"status": "done"}}},
		{"data that is not an object", func(m *store.Message) { m.Data = store.JSON(`[1]`) }, "data", map[string]any{}},
		{"no tags", func(m *store.Message) { m.Tags = nil }, "tags", []any{}},
		{"no severity", func(m *store.Message) { m.Severity = "" }, "severity", "none"},
		{"no actor", func(m *store.Message) { m.Actor = nil }, "actor", map[string]any{"type": "none", "data": nil}},
		{"an actor without a type", func(m *store.Message) { m.Actor = store.JSON(`{"data":"x"}`) }, "actor",
			map[string]any{"type": "none", "data": nil}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := rich()
			tc.edit(&m)
			both := map[string]any{}
			maps.Copy(both, encode(t, wire.ReceivedOf(&m, &sub, nil)))
			maps.Copy(both, encode(t, wire.FeedItemOf(&m, &sub)))
			require.Equal(t, tc.want, both[tc.field])
		})
	}
}

// TestMessageDelivery: where a delivered message went, from its stored delivery.
func TestMessageDelivery(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		delivery string
		want     map[string]any
	}{
		{"e-mail", `{"to":["a@x.test","b@x.test"]}`, map[string]any{"email": "a@x.test"}},
		{"sms", `{"phone":"+15550100"}`, map[string]any{"phone": "+15550100"}},
		{"push", `{"deviceTokens":["t1","t2"]}`, map[string]any{"deviceTokens": []any{"t1", "t2"}}},
		{"chat", `{"webhookHost":"hooks.x.test"}`, map[string]any{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := bare()
			m.Delivery = store.JSON(tc.delivery)
			got := encode(t, wire.MessageOf(&m))
			for _, k := range []string{"email", "phone", "deviceTokens"} {
				if v, ok := tc.want[k]; ok {
					require.Equal(t, v, got[k])
				} else {
					require.NotContains(t, got, k)
				}
			}
		})
	}
}

// TestNotification: the inbox notification reads its state while it holds
// and its links and actions from the stored cta.
func TestNotification(t *testing.T) {
	t.Parallel()
	m := rich()
	wf := wire.WorkflowOf(store.Workflow{ID: "w1", Key: "welcome", Name: "Welcome"})
	got := encode(t, wire.NotificationOf(&m, &sub, &wf))
	require.Equal(t, "2031-03-14T15:09:26.535Z", got["readAt"])
	require.Equal(t, map[string]any{"url": "/a"}, got["redirect"])
	require.Equal(t, map[string]any{"label": "Go", "isCompleted": true, "redirect": map[string]any{"url": "/go"}},
		got["primaryAction"])
	require.Equal(t, map[string]any{"label": "No", "isCompleted": false}, got["secondaryAction"])
	require.Equal(t, []any{}, got["workflow"].(map[string]any)["tags"])

	m.Read, m.Seen = false, false
	got = encode(t, wire.NotificationOf(&m, &sub, nil))
	require.Nil(t, got["readAt"], "read before, unread now")
	require.Nil(t, got["firstSeenAt"])
	require.NotContains(t, got, "workflow")

	m = bare()
	got = encode(t, wire.NotificationOf(&m, &sub, nil))
	for _, k := range []string{"subject", "avatar", "primaryAction", "secondaryAction", "redirect", "tags", "data"} {
		require.NotContains(t, got, k)
	}
}
