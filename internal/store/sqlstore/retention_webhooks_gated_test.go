package sqlstore

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
)

// retentionWrites are the write-gate cases of the purges
// (TestEveryWriteTakesTheGate); each is set up so that it deletes.
func (f *gateFixture) retentionWrites() map[string]gatedWrite {
	// finished triggers the workflow and completes its jobs: a trigger the
	// activity purge may delete.
	finished := func(t *testing.T) {
		jobs := f.claimed(t, false)
		outcomes := make([]store.JobOutcome, len(jobs))
		for i, j := range jobs {
			outcomes[i] = store.JobOutcome{Job: j.Job, Status: store.JobCompleted}
		}
		_, err := f.db.JobFinish(t.Context(), outcomes, f.at)
		require.NoError(t, err)
	}
	purge := func(ctx context.Context, fn func(context.Context, *store.RetentionPurgeParams) (store.RetentionPurged, error),
		deleted func(store.RetentionPurged) int64) error {
		out, err := fn(ctx, &store.RetentionPurgeParams{Before: f.at.Add(time.Hour), Limit: 1000})
		if err == nil && deleted(out) == 0 {
			err = context.Canceled // it deleted nothing: the case proves nothing
		}
		return err
	}
	return map[string]gatedWrite{
		"RetentionActivityPurge": {setup: finished, call: func(ctx context.Context) error {
			return purge(ctx, f.db.RetentionActivityPurge, func(p store.RetentionPurged) int64 { return p.Notifications })
		}},
		"RetentionTransactionPurge": {setup: func(t *testing.T) {
			finished(t)
			_, err := f.db.RetentionActivityPurge(t.Context(), &store.RetentionPurgeParams{Before: f.at.Add(time.Hour), Limit: 1000})
			require.NoError(t, err)
		}, call: func(ctx context.Context) error {
			return purge(ctx, f.db.RetentionTransactionPurge, func(p store.RetentionPurged) int64 { return p.Transactions })
		}},
		"RetentionInboxPurge": {setup: func(t *testing.T) { f.message(t) }, call: func(ctx context.Context) error {
			return purge(ctx, f.db.RetentionInboxPurge, func(p store.RetentionPurged) int64 { return p.InboxMessages })
		}},
	}
}

// webhookWrites are the write-gate cases of the outbound webhooks'
// endpoints, events and attempts (TestEveryWriteTakesTheGate).
func (f *gateFixture) webhookWrites() map[string]gatedWrite {
	var (
		endpoint store.WebhookEndpoint
		claimed  []store.WebhookClaimed
	)
	newEndpoint := func(t *testing.T) {
		var err error
		endpoint, err = f.db.WebhookEndpointCreate(t.Context(), &store.WebhookEndpointCreateParams{Scope: f.scope,
			URL: "https://hooks.example.com/" + id.New(), Secret: "whsec_c2VjcmV0", Now: f.now()})
		require.NoError(t, err)
	}
	event := func(ctx context.Context) (int, error) {
		return f.db.WebhookEventCreate(ctx, &store.WebhookEventCreateParams{Scope: f.scope, Events: []store.WebhookEvent{{
			ID: id.New(), EnvironmentID: f.env.ID, Type: "message.sent", Body: []byte(`{}`), CreatedAt: f.at}},
			FirstAttemptAt: f.at, Now: f.at})
	}
	claim := func(t *testing.T) {
		newEndpoint(t)
		_, err := event(t.Context())
		require.NoError(t, err)
		claimed, err = f.db.WebhookAttemptClaim(t.Context(), 100, time.Minute, f.at)
		require.NoError(t, err)
		require.NotEmpty(t, claimed)
	}
	return map[string]gatedWrite{
		"WebhookEndpointCreate": {call: func(ctx context.Context) error {
			_, err := f.db.WebhookEndpointCreate(ctx, &store.WebhookEndpointCreateParams{Scope: f.scope,
				URL: "https://hooks.example.com/new", Secret: "whsec_c2VjcmV0", Now: f.at})
			return err
		}},
		"WebhookEndpointUpdate": {setup: newEndpoint, call: func(ctx context.Context) error {
			_, err := f.db.WebhookEndpointUpdate(ctx, &store.WebhookEndpointUpdateParams{Scope: f.scope, ID: endpoint.ID,
				Description: ptrTo("changed"), Now: f.at})
			return err
		}},
		"WebhookSecretRotate": {setup: newEndpoint, call: func(ctx context.Context) error {
			_, err := f.db.WebhookSecretRotate(ctx, &store.WebhookSecretRotateParams{Scope: f.scope, ID: endpoint.ID,
				Secret: "whsec_bmV3", PreviousUntil: f.at.Add(time.Hour), Now: f.at})
			return err
		}},
		"WebhookEndpointDelete": {setup: newEndpoint, call: func(ctx context.Context) error {
			return f.db.WebhookEndpointDelete(ctx, f.scope, endpoint.ID)
		}},
		"WebhookEventCreate": {setup: newEndpoint, call: func(ctx context.Context) error {
			n, err := event(ctx)
			if err == nil && n == 0 {
				err = context.Canceled // no attempt stored: the case proves nothing
			}
			return err
		}},
		"WebhookAttemptClaim": {setup: func(t *testing.T) {
			newEndpoint(t)
			_, err := event(t.Context())
			require.NoError(t, err)
		}, call: func(ctx context.Context) error {
			got, err := f.db.WebhookAttemptClaim(ctx, 100, time.Minute, f.at)
			if err == nil && len(got) == 0 {
				err = context.Canceled
			}
			return err
		}},
		"WebhookAttemptFinish": {setup: claim, call: func(ctx context.Context) error {
			return f.db.WebhookAttemptFinish(ctx, []store.WebhookAttemptResult{{Attempt: claimed[0].Attempt,
				StatusCode: ptrTo(200), Success: true, AttemptedAt: f.at}}, f.at)
		}},
		"WebhookOutboxClaim": {setup: func(t *testing.T) {
			// A change whose context asks for an event: its entry.
			ctx := store.WithOutbox(t.Context(), &store.OutboxIntent{Scope: f.scope,
				Render: func(context.Context, store.OutboxTx) ([]store.OutboxEvent, error) {
					return []store.OutboxEvent{{Type: "workflow.created", Data: []byte(`{}`)}}, nil
				}})
			require.NoError(t, f.db.WorkflowCreate(ctx, &store.Workflow{ID: id.New(), OrganizationID: f.scope.OrganizationID,
				EnvironmentID: f.env.ID, Key: "outbox-" + id.New(), Name: "outbox", Active: true, CreatedAt: f.at, UpdatedAt: f.at}))
		}, call: func(ctx context.Context) error {
			got, err := f.db.WebhookOutboxClaim(ctx, []string{store.OutboxEvents}, 100, time.Minute,
				time.Now().Add(store.OutboxHold+time.Second))
			if err == nil && len(got) == 0 {
				err = context.Canceled
			}
			return err
		}},
		"WebhookPrune": {setup: func(t *testing.T) {
			claim(t) // then canceled: an attempt the prune deletes
			require.NoError(t, f.db.WebhookAttemptFinish(t.Context(), []store.WebhookAttemptResult{{Attempt: claimed[0].Attempt,
				Canceled: true}}, f.at))
		}, call: func(ctx context.Context) error {
			n, err := f.db.WebhookPrune(ctx, 100, f.at.Add(time.Hour))
			if err == nil && n == 0 {
				err = context.Canceled
			}
			return err
		}},
	}
}
