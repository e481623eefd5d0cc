package sqlstore

import (
	"fmt"
	"strconv"

	"github.com/herald-notify/herald/internal/store"
)

// triggerStatusWhere is the condition on a notification that its jobs sum
// up to status, as store.TriggerStatus sums them up: failed when a job
// failed; in progress when none failed and one is still to finish;
// canceled when none failed or is to finish and one was canceled;
// completed otherwise. Each EXISTS reads jobs_notification.
func triggerStatusWhere(a *args, status string) (string, error) {
	has := func(statuses ...string) string {
		return "EXISTS (SELECT 1 FROM jobs WHERE jobs.notification_id = notifications.id AND jobs.status IN (" + a.list(statuses) + "))"
	}
	switch status {
	case store.TriggerFailed:
		return has(store.JobFailed), nil
	case store.TriggerInProgress:
		return has(store.JobsInProgress...) + " AND NOT " + has(store.JobFailed), nil
	case store.TriggerCanceled:
		return has(store.JobCanceled) + " AND NOT " + has(append([]string{store.JobFailed}, store.JobsInProgress...)...), nil
	case store.TriggerCompleted:
		return "NOT " + has(append([]string{store.JobFailed, store.JobCanceled}, store.JobsInProgress...)...), nil
	default:
		return "", fmt.Errorf("sqlstore: notifications: unknown trigger status %s", strconv.Quote(status))
	}
}
