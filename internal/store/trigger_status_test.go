package store_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/store"
)

func TestTriggerStatus(t *testing.T) {
	t.Parallel()
	jobs := func(statuses ...string) []store.Job {
		var out []store.Job
		for _, s := range statuses {
			out = append(out, store.Job{Status: s})
		}
		return out
	}
	for _, tc := range []struct {
		jobs []store.Job
		want string
	}{
		{nil, store.TriggerCompleted},
		{jobs(store.JobCompleted, store.JobSkipped, store.JobMerged), store.TriggerCompleted},
		{jobs(store.JobCompleted, store.JobPending), store.TriggerInProgress},
		{jobs(store.JobDelayed), store.TriggerInProgress},
		{jobs(store.JobCanceled, store.JobCompleted), store.TriggerCanceled},
		{jobs(store.JobCanceled, store.JobQueued), store.TriggerInProgress},
		{jobs(store.JobRunning, store.JobFailed, store.JobCanceled), store.TriggerFailed},
	} {
		require.Equal(t, tc.want, store.TriggerStatus(tc.jobs), "%v", tc.jobs)
	}
}
