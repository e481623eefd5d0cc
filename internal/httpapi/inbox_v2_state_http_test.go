package httpapi_test

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/engine"
)

// TestInboxV2ChangeOne: read, unread, archive, unarchive, snooze and
// unsnooze answer the notification with its new state and times; another
// subscriber's notification, or another environment's, is a 404.
func TestInboxV2ChangeOne(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		x := newInbox2(t, h)
		x.notify(t, "billing-alert", "ada", 1, "a")
		x.notify(t, "plain", "bob", 2, "")
		id := x.ids(t, "ada", url.Values{})[0]
		bobs := x.ids(t, "bob", url.Values{})[0]
		path := notificationsPath("ada") + "/" + id
		patch := func(action string, body any) map[string]any {
			t.Helper()
			x.clock.Advance(time.Second)
			res := x.h.call(t, x.dev, "PATCH", path+"/"+action, body, nil)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
			n := res.Object(t)
			require.Equal(t, id, n["id"])
			return n
		}
		at := func() string { return x.clock.Now().Format("2006-01-02T15:04:05.000Z") }

		n := patch("read", nil)
		require.Equal(t, "rs--", flagsOf(n))
		require.Equal(t, at(), n["readAt"])
		require.Equal(t, at(), n["firstSeenAt"])
		firstSeen := n["firstSeenAt"]
		require.EqualValues(t, 0, x.unseen(t, "ada"))

		n = patch("unread", nil)
		require.Equal(t, "-s--", flagsOf(n))
		require.Nil(t, n["readAt"])
		require.Equal(t, firstSeen, n["firstSeenAt"], "first seen stays")

		n = patch("archive", nil)
		require.Equal(t, "rsa-", flagsOf(n))
		require.Equal(t, at(), n["archivedAt"])
		require.Equal(t, at(), n["readAt"])
		require.Empty(t, h.feedItems(t, "ada"))

		n = patch("unarchive", nil)
		require.Equal(t, "rs--", flagsOf(n))
		require.Nil(t, n["archivedAt"])
		require.Len(t, h.feedItems(t, "ada"), 1)

		until := x.clock.Now().Add(2 * time.Hour).UTC()
		n = patch("snooze", map[string]any{"snoozeUntil": until.Format(time.RFC3339Nano)})
		require.Equal(t, "rs-z", flagsOf(n))
		require.Equal(t, until.Format("2006-01-02T15:04:05.000Z"), n["snoozedUntil"])
		require.Empty(t, h.feedItems(t, "ada"), "snoozed notifications leave the v1 feed")

		n = patch("archive", nil)
		require.Equal(t, "rsa-", flagsOf(n), "archiving ends a snooze")
		require.Nil(t, n["snoozedUntil"])
		n = patch("snooze", map[string]any{"snoozeUntil": until.Format(time.RFC3339)})
		require.Equal(t, "rs-z", flagsOf(n), "snoozing unarchives")

		n = patch("unsnooze", nil)
		require.Equal(t, "rs--", flagsOf(n))
		require.Nil(t, n["snoozedUntil"])
		require.Equal(t, "rs--", flagsOf(patch("unsnooze", nil)), "unsnoozing a notification not snoozed changes nothing")

		// Validation, and notifications that are not the caller's.
		for _, c := range []struct {
			body   any
			fields []string
		}{
			{map[string]any{}, []string{"snoozeUntil"}},
			{map[string]any{"snoozeUntil": 5}, []string{"snoozeUntil"}},
			{map[string]any{"snoozeUntil": "tomorrow"}, []string{"snoozeUntil"}},
			{map[string]any{"snoozeUntil": x.clock.Now().Add(59 * time.Second).Format(time.RFC3339Nano)}, []string{"snoozeUntil"}},
			{map[string]any{"snoozeUntil": x.clock.Now().Add(91 * 24 * time.Hour).Format(time.RFC3339)}, []string{"snoozeUntil"}},
		} {
			requireError(t, x.h.call(t, x.dev, "PATCH", path+"/snooze", c.body, nil), http.StatusUnprocessableEntity,
				"PATCH", path+"/snooze", c.fields...)
		}
		requireError(t, x.h.call(t, x.dev, "PATCH", path+"/snooze", "[]", nil), http.StatusBadRequest, "PATCH", path+"/snooze")
		for _, target := range []string{
			notificationsPath("ada") + "/" + bobs + "/read",
			notificationsPath("ada") + "/0123456789abcdef01234567/archive",
			notificationsPath("nobody") + "/" + id + "/read",
		} {
			requireError(t, x.h.call(t, x.dev, "PATCH", target, nil, nil), http.StatusNotFound, "PATCH", target)
		}
		requireError(t, x.h.call(t, h.authFor(asProd), "PATCH", path+"/read", nil, nil), http.StatusNotFound, "PATCH", path+"/read")
		target := notificationsPath("ada") + "/xyz/read"
		requireError(t, x.h.call(t, x.dev, "PATCH", target, nil, nil), http.StatusUnprocessableEntity, "PATCH", target, "notificationId")
		require.Equal(t, "----", flagsOf(objects(t, x.list(t, "bob", nil)["data"])[0]), "bob's is untouched")
	})
}

// TestInboxV2Actions: completing an action marks it completed (the other
// not) and reads the notification; reverting leaves it pending; a button
// the notification lacks is a 400.
func TestInboxV2Actions(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		x := newInbox2(t, h)
		x.notify(t, "billing-alert", "ada", 1, "a")
		x.notify(t, "plain", "ada", 2, "")
		all := x.ids(t, "ada", url.Values{})
		act := func(id, button, verb string) map[string]any {
			t.Helper()
			res := x.h.call(t, x.dev, "PATCH", notificationsPath("ada")+"/"+id+"/actions/"+button+"/"+verb, nil, nil)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
			return res.Object(t)
		}
		completed := func(n map[string]any) [2]bool {
			return [2]bool{n["primaryAction"].(map[string]any)["isCompleted"].(bool),
				n["secondaryAction"].(map[string]any)["isCompleted"].(bool)}
		}
		n := act(all[1], "primary", "complete")
		require.Equal(t, [2]bool{true, false}, completed(n))
		require.Equal(t, "rs--", flagsOf(n), "acting reads the notification")
		require.Equal(t, [2]bool{false, true}, completed(act(all[1], "secondary", "complete")))
		require.Equal(t, [2]bool{false, false}, completed(act(all[1], "secondary", "revert")))
		listed := objects(t, x.list(t, "ada", nil)["data"])[1]
		require.Equal(t, [2]bool{false, false}, completed(listed))

		// The v1 feed shows the same action in the message's cta.
		for _, it := range h.feedItems(t, "ada") {
			if it["_id"] == all[1] {
				action := it["cta"].(map[string]any)["action"].(map[string]any)
				require.Equal(t, "pending", action["status"])
				require.Equal(t, map[string]any{"type": "secondary"}, action["result"])
			}
		}

		target := notificationsPath("ada") + "/" + all[0] + "/actions/primary/complete"
		requireError(t, x.h.call(t, x.dev, "PATCH", target, nil, nil), http.StatusBadRequest, "PATCH", target)
		target = notificationsPath("ada") + "/" + all[1] + "/actions/tertiary/complete"
		requireError(t, x.h.call(t, x.dev, "PATCH", target, nil, nil), http.StatusUnprocessableEntity, "PATCH", target, "actionType")
		target = notificationsPath("ada") + "/0123456789abcdef01234567/actions/primary/revert"
		requireError(t, x.h.call(t, x.dev, "PATCH", target, nil, nil), http.StatusNotFound, "PATCH", target)
	})
}

// TestInboxV2Delete: 204, gone from the list, the counts and the v1 feed;
// a second delete is a 404.
func TestInboxV2Delete(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		x := newInbox2(t, h)
		x.notify(t, "billing-alert", "ada", 1, "a")
		x.notify(t, "billing-alert", "ada", 2, "b")
		all := x.ids(t, "ada", url.Values{})
		target := notificationsPath("ada") + "/" + all[0]
		res := x.h.call(t, x.dev, "DELETE", target, nil, nil)
		require.Equal(t, http.StatusNoContent, res.Status, "%s", res.Raw)
		require.Equal(t, all[1:], x.ids(t, "ada", url.Values{}))
		require.Equal(t, []float64{1}, x.counts(t, "ada", `[{}]`))
		require.Len(t, h.feedItems(t, "ada"), 1)
		require.EqualValues(t, 1, x.unseen(t, "ada"))
		requireError(t, x.h.call(t, x.dev, "DELETE", target, nil, nil), http.StatusNotFound, "DELETE", target)
		requireError(t, x.h.call(t, x.dev, "PATCH", target+"/read", nil, nil), http.StatusNotFound, "PATCH", target+"/read")
		target = notificationsPath("bob") + "/" + all[1]
		requireError(t, x.h.call(t, x.dev, "DELETE", target, nil, nil), http.StatusNotFound, "DELETE", target)
	})
}

// TestInboxV2SnoozeExpiry: a snoozed notification comes back when its time
// passes — unread, unseen, first in the list, back in the v1 feed and the
// counts — with no worker running, at the next read.
func TestInboxV2SnoozeExpiry(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, h *harness) {
		x := newInbox2(t, h)
		x.notify(t, "billing-alert", "ada", 1, "a")
		x.notify(t, "billing-alert", "ada", 2, "b")
		all := x.ids(t, "ada", url.Values{})
		until := x.clock.Now().Add(2 * time.Minute)
		res := x.h.call(t, x.dev, "PATCH", notificationsPath("ada")+"/"+all[1]+"/snooze",
			map[string]any{"snoozeUntil": until.Format(time.RFC3339Nano)}, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Raw)
		unread := `[{"read":false,"archived":false,"snoozed":false},{"snoozed":true}]`
		require.Equal(t, []float64{1, 1}, x.counts(t, "ada", unread))
		require.EqualValues(t, 1, x.unseen(t, "ada"))

		x.clock.Advance(3 * time.Minute)
		require.EqualValues(t, 2, x.unseen(t, "ada"))
		require.Equal(t, []float64{2, 0}, x.counts(t, "ada", unread))
		first := objects(t, x.list(t, "ada", nil)["data"])[0]
		require.Equal(t, all[1], first["id"], "back first")
		require.Equal(t, "----", flagsOf(first))
		require.Equal(t, until.UTC().Format("2006-01-02T15:04:05.000Z"), first["createdAt"])
		require.Len(t, h.feedItems(t, "ada"), 2)
	})
}

// inboxSweepFixtures adds what the bad-input sweep's inbox routes name:
// notifications of sw-sub with both actions, and a time to snooze until.
func inboxSweepFixtures(t *testing.T, h *harness, eng *engine.Engine, vars map[string]string) {
	dev := h.authFor(asDev)
	h.createWorkflow(t, dev, map[string]any{"name": "sw-inbox-flow", "workflowId": "sw-inbox-flow", "tags": []string{"t"},
		"severity": "high", "steps": []any{map[string]any{"name": "Inbox", "type": "in_app", "controlValues": map[string]any{
			"body": "Hello", "data": map[string]any{"k": 1}, "primaryAction": map[string]any{"label": "Go"},
			"secondaryAction": map[string]any{"label": "Later"}}}}})
	for _, tx := range []string{"sw-tx-inbox", "sw-tx-inbox-victim", "sw-tx-inbox-client-victim"} {
		h.trigger(t, dev, map[string]any{"name": "sw-inbox-flow", "to": "sw-sub", "transactionId": tx})
	}
	drain(t, eng)
	for _, it := range h.feedItems(t, "sw-sub") {
		switch it["transactionId"] {
		case "sw-tx-inbox":
			vars["inboxMessage"] = it["_id"].(string)
		case "sw-tx-inbox-victim":
			vars["inboxVictim"] = it["_id"].(string)
		case "sw-tx-inbox-client-victim":
			vars["inboxClientVictim"] = it["_id"].(string)
		}
	}
	require.NotEmpty(t, vars["inboxMessage"])
	require.NotEmpty(t, vars["inboxVictim"])
	require.NotEmpty(t, vars["inboxClientVictim"])
	vars["snoozeUntil"] = time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)
}
