package dashboard

import (
	"net/http"
	"strconv"
	"time"

	"github.com/herald-notify/herald/internal/store"
)

// analyticsOutcomes are the outcomes the Analytics page charts, in order.
var analyticsOutcomes = []string{"sent", "delivered", "opened", "failed"}

// defaultAnalyticsDays and maxAnalyticsDays bound ?days=.
const (
	defaultAnalyticsDays = 30
	maxAnalyticsDays     = 90
)

// analyticsCounts are the messages of a day (or of the whole window): all
// of them, by channel and by outcome.
type analyticsCounts struct {
	Messages int64            `json:"messages"`
	Channels map[string]int64 `json:"channels"`
	Outcomes map[string]int64 `json:"outcomes"`
}

type analyticsDayJSON struct {
	Date string `json:"date"`
	analyticsCounts
}

func newAnalyticsCounts() analyticsCounts {
	c := analyticsCounts{Channels: map[string]int64{}, Outcomes: map[string]int64{}}
	for _, ch := range activityChannels {
		c.Channels[ch] = 0
	}
	for _, o := range analyticsOutcomes {
		c.Outcomes[o] = 0
	}
	return c
}

func (c *analyticsCounts) add(n store.MessageDayCount) {
	c.Messages += n.Messages
	c.Channels[n.Channel] += n.Messages
	for o, v := range map[string]int64{"sent": n.Sent, "delivered": n.Delivered, "opened": n.Opened, "failed": n.Failed} {
		c.Outcomes[o] += v
	}
}

// GET /dashboard/api/env/{env}/analytics?days=30: the environment's
// messages per UTC day of the last `days` (1 to 90, today's included),
// oldest first, every day listed (zeros where none), by channel and by
// outcome, with the window's totals (store.MessageDailyCounts: a message
// counts on the day it was created).
func (d *Dashboard) analytics(w http.ResponseWriter, r *http.Request, _ account, env store.Environment) error {
	days := defaultAnalyticsDays
	if v := r.URL.Query().Get("days"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxAnalyticsDays {
			return errorf(http.StatusUnprocessableEntity, "days must be an integer from 1 to "+strconv.Itoa(maxAnalyticsDays))
		}
		days = n
	}
	now := d.now().UTC()
	counts, err := d.store.MessageDailyCounts(r.Context(), &store.MessageDailyCountsParams{
		Scope: store.Scope{OrganizationID: env.OrganizationID, EnvironmentID: env.ID}, Days: days, Now: now})
	if err != nil {
		return err
	}
	first := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC).AddDate(0, 0, 1-days)
	out := make([]analyticsDayJSON, days)
	for i := range out {
		out[i] = analyticsDayJSON{Date: first.AddDate(0, 0, i).Format(time.DateOnly), analyticsCounts: newAnalyticsCounts()}
	}
	total := newAnalyticsCounts()
	for _, c := range counts {
		i := int(c.Day.Sub(first) / (24 * time.Hour))
		if i < 0 || i >= days {
			continue // not in the window the store was asked for
		}
		out[i].add(c)
		total.add(c)
	}
	writeJSON(w, http.StatusOK, map[string]any{"days": days, "from": out[0].Date, "to": out[days-1].Date,
		"channels": activityChannels, "outcomes": analyticsOutcomes, "data": out, "total": total})
	return nil
}
