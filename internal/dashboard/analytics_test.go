package dashboard_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
)

type analyticsCounts struct {
	Messages int64            `json:"messages"`
	Channels map[string]int64 `json:"channels"`
	Outcomes map[string]int64 `json:"outcomes"`
}

type analyticsAnswer struct {
	Days     int      `json:"days"`
	From     string   `json:"from"`
	To       string   `json:"to"`
	Channels []string `json:"channels"`
	Outcomes []string `json:"outcomes"`
	Data     []struct {
		Date string `json:"date"`
		analyticsCounts
	} `json:"data"`
	Total analyticsCounts `json:"total"`
}

// TestAnalytics: GET /dashboard/api/env/{env}/analytics lists every UTC
// day of the window, oldest first, today's last, with the environment's
// messages of that day by channel and by outcome (an `opened` provider
// event recorded on a message counts), and the window's totals; older
// messages and another environment's are not counted; days is 1 to 90.
func TestAnalytics(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f *fixture) {
		ctx := t.Context()
		tok := f.signIn()
		now := f.clock()
		dev, err := f.db.EnvironmentGetByName(ctx, "development")
		require.NoError(t, err)
		prod, err := f.db.EnvironmentGetByName(ctx, "production")
		require.NoError(t, err)
		msg := func(env store.Environment, channel, status string, at time.Time) store.Message {
			return store.Message{ID: id.New(), OrganizationID: env.OrganizationID, EnvironmentID: env.ID, NotificationID: id.New(),
				JobID: id.New(), SubscriberID: id.New(), WorkflowID: id.New(), TemplateIdentifier: "wf", TransactionID: id.New(),
				Channel: channel, ProviderID: "p", Content: "c", Status: status, CreatedAt: at, UpdatedAt: at}
		}
		mail := msg(dev, "email", store.MessageSent, now)
		require.NoError(t, f.db.MessageBulkLoad(ctx, []store.Message{
			msg(dev, "in_app", store.MessageSent, now), msg(dev, "in_app", store.MessageSent, now), mail,
			msg(dev, "sms", store.MessageError, now), msg(dev, "push", store.MessageSent, now.Add(-2*24*time.Hour)),
			msg(dev, "chat", store.MessageSent, now.Add(-10*24*time.Hour)), msg(dev, "email", store.MessageSent, now.Add(-40*24*time.Hour)),
			msg(prod, "email", store.MessageSent, now),
		}))
		_, err = f.db.DeliveryEventsAdd(ctx, &store.DeliveryEventsAddParams{Scope: store.Scope{OrganizationID: dev.OrganizationID,
			EnvironmentID: dev.ID}, Events: []store.DeliveryEvent{{IntegrationID: "i", ProviderID: "sendgrid", Key: "e1",
			Status: "opened", MessageID: mail.ID, OccurredAt: now, Raw: "{}", Detail: "opened"}}, Now: now})
		require.NoError(t, err)
		_, err = f.db.DeliveryEventsRecord(ctx, &store.DeliveryEventsRecordParams{Limit: 10, MatchFor: time.Minute, Now: now})
		require.NoError(t, err)

		get := func(env, query string) analyticsAnswer {
			t.Helper()
			rec := f.do(req{method: "GET", path: "/dashboard/api/env/" + env + "/analytics" + query, cookie: tok})
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			var a analyticsAnswer
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &a))
			return a
		}
		day := func(d time.Time) string { return d.UTC().Format(time.DateOnly) }
		a := get("development", "")
		require.Equal(t, 30, a.Days)
		require.Len(t, a.Data, 30)
		require.Equal(t, day(now.AddDate(0, 0, -29)), a.From)
		require.Equal(t, day(now), a.To)
		require.Equal(t, a.From, a.Data[0].Date)
		require.Equal(t, []string{"in_app", "email", "sms", "chat", "push"}, a.Channels)
		require.Equal(t, []string{"sent", "delivered", "opened", "failed"}, a.Outcomes)
		today := a.Data[29]
		require.Equal(t, day(now), today.Date)
		require.Equal(t, analyticsCounts{Messages: 4, Channels: map[string]int64{"in_app": 2, "email": 1, "sms": 1, "chat": 0, "push": 0},
			Outcomes: map[string]int64{"sent": 3, "delivered": 2, "opened": 1, "failed": 1}}, today.analyticsCounts)
		require.Equal(t, day(now.AddDate(0, 0, -2)), a.Data[27].Date)
		require.Equal(t, int64(1), a.Data[27].Channels["push"])
		require.Equal(t, int64(1), a.Data[19].Channels["chat"], "ten days ago")
		require.Equal(t, analyticsCounts{Messages: 6, Channels: map[string]int64{"in_app": 2, "email": 1, "sms": 1, "chat": 1, "push": 1},
			Outcomes: map[string]int64{"sent": 5, "delivered": 2, "opened": 1, "failed": 1}}, a.Total, "the message of 40 days ago is not counted")
		for _, d := range a.Data[:19] {
			require.Zero(t, d.Messages, d.Date)
		}

		week := get("development", "?days=7")
		require.Len(t, week.Data, 7)
		require.Equal(t, int64(5), week.Total.Messages, "ten days ago is outside a week")
		require.Equal(t, int64(7), get("development", "?days=90").Total.Messages)
		require.Equal(t, int64(1), get("production", "").Total.Messages, "each environment its own")
		one := get("development", "?days=1")
		require.Len(t, one.Data, 1)
		require.Equal(t, one.From, one.To)

		for _, bad := range []string{"0", "91", "-1", "x", "1.5", "99999999999999999999"} {
			requireError(t, f.do(req{method: "GET", path: "/dashboard/api/env/development/analytics?days=" + bad, cookie: tok}),
				http.StatusUnprocessableEntity)
		}
		requireError(t, f.do(req{method: "GET", path: "/dashboard/api/env/staging/analytics", cookie: tok}), http.StatusNotFound)
		requireError(t, f.do(req{method: "GET", path: "/dashboard/api/env/development/analytics"}), http.StatusUnauthorized)
	})
}
