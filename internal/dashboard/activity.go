package dashboard

import (
	"net/http"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/textcheck"
	"github.com/herald-notify/herald/internal/wire"
)

var activityChannels = []string{"in_app", "email", "sms", "chat", "push"}

// activityPage is how many triggers the activity list shows at once.
const activityPage = 50

type activityJSON struct {
	ID            string   `json:"_id"`
	TransactionID string   `json:"transactionId"`
	CreatedAt     string   `json:"createdAt"`
	WorkflowID    string   `json:"workflowId"`
	WorkflowName  string   `json:"workflowName"`
	SubscriberID  string   `json:"subscriberId"`
	Channels      []string `json:"channels"`
	Status        string   `json:"status"`
}

// GET /dashboard/api/env/{env}/activity: the environment's triggers,
// newest first, with their status; filters workflow (id or workflowId),
// subscriberId, transactionId, channel and status (store.TriggerStatus,
// filtered by the store); page from 0.
func (d *Dashboard) activity(w http.ResponseWriter, r *http.Request, _ account, env store.Environment) error {
	q := r.URL.Query()
	p := store.NotificationListParams{Scope: store.Scope{OrganizationID: env.OrganizationID, EnvironmentID: env.ID}, Limit: activityPage}
	for _, f := range []struct {
		name string
		set  func(string)
	}{
		{"workflow", func(v string) { p.WorkflowIDs = []string{v} }},
		{"subscriberId", func(v string) { p.SubscriberIDs = []string{v} }},
		{"transactionId", func(v string) { p.TransactionID = v }},
	} {
		if v := q.Get(f.name); v != "" {
			if utf8.RuneCountInString(v) > 256 || textcheck.Text(v) != nil {
				return errorf(http.StatusUnprocessableEntity, f.name+" must be text of at most 256 characters")
			}
			f.set(v)
		}
	}
	if v := q.Get("channel"); v != "" {
		if !slices.Contains(activityChannels, v) {
			return errorf(http.StatusUnprocessableEntity, "channel must be one of in_app, email, sms, chat, push")
		}
		p.Channels = []string{v}
	}
	status := q.Get("status")
	if status != "" && !slices.Contains(store.TriggerStatuses, status) {
		return errorf(http.StatusUnprocessableEntity, "status must be one of completed, in progress, failed, canceled")
	}
	if v := q.Get("page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 10_000 {
			return errorf(http.StatusUnprocessableEntity, "page must be an integer from 0 to 10000")
		}
		p.Page = n
	}
	p.Status = status
	list, more, err := d.store.NotificationList(r.Context(), &p)
	if err != nil {
		return err
	}
	out := appendActivity([]activityJSON{}, list)
	writeJSON(w, http.StatusOK, map[string]any{"data": out, "hasMore": more})
	return nil
}

func appendActivity(out []activityJSON, list []store.NotificationDetail) []activityJSON {
	for _, n := range list {
		st := store.TriggerStatus(n.Jobs)
		channels := n.Notification.Channels
		if channels == nil {
			channels = []string{}
		}
		out = append(out, activityJSON{ID: n.Notification.ID, TransactionID: n.Notification.TransactionID,
			CreatedAt: wire.Time(n.Notification.CreatedAt), WorkflowID: n.Workflow.Key, WorkflowName: n.Workflow.Name,
			SubscriberID: n.Subscriber.SubscriberID, Channels: channels, Status: st})
	}
	return out
}
