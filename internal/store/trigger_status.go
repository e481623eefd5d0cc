package store

// Trigger statuses: a trigger's (a notification's) status summed up from
// its jobs (TriggerStatus), as the dashboard's Activity shows and filters
// it (NotificationListParams.Status).
const (
	TriggerFailed     = "failed"
	TriggerCanceled   = "canceled"
	TriggerInProgress = "in progress"
	TriggerCompleted  = "completed"
)

// TriggerStatuses are the trigger statuses, in the order they are offered.
var TriggerStatuses = []string{TriggerCompleted, TriggerInProgress, TriggerFailed, TriggerCanceled}

// JobsInProgress are the statuses of a job still to finish.
var JobsInProgress = []string{JobPending, JobQueued, JobRunning, JobDelayed}

// TriggerStatus sums up a trigger's jobs: failed when one failed, in
// progress while one waits or runs, canceled when one was canceled, else
// completed (skipped and merged steps are done; no job is completed).
func TriggerStatus(jobs []Job) string {
	status := TriggerCompleted
	for _, j := range jobs {
		switch j.Status {
		case JobFailed:
			return TriggerFailed
		case JobPending, JobQueued, JobRunning, JobDelayed:
			status = TriggerInProgress
		case JobCanceled:
			if status == TriggerCompleted {
				status = TriggerCanceled
			}
		}
	}
	return status
}
