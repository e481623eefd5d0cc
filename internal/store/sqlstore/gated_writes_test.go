package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/secret"
	"github.com/herald-notify/herald/internal/store"
)

// gateFixture is a SQLite store with one environment, a subscriber with
// in-app messages and a one-step in-app workflow, for TestEveryWriteTakesTheGate.
type gateFixture struct {
	db      *DB
	scope   store.Scope
	env     store.Environment
	sub     store.Subscriber
	wf      store.Workflow
	version *sql.Conn // a reader connection: PRAGMA data_version changes with others' commits
	at      time.Time
}

func newGateFixture(t *testing.T) *gateFixture {
	keys, err := secret.Derive("test-secret-0123456789abcdef")
	require.NoError(t, err)
	db, err := OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "h.db"), keys)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	f := &gateFixture{db: db, at: time.Date(2031, 3, 14, 15, 9, 26, 0, time.UTC)}
	org := store.Organization{ID: id.NewAt(f.at), Name: "Org", CreatedAt: f.at}
	p := &store.BootstrapParams{Organization: org, Owner: store.Member{ID: id.NewAt(f.at), OrganizationID: org.ID,
		Email: "owner@example.com", Role: "owner", CreatedAt: f.at},
		Environments: []store.Environment{{ID: id.NewAt(f.at), OrganizationID: org.ID, Name: "development", CreatedAt: f.at}}}
	_, err = db.Bootstrap(t.Context(), p)
	require.NoError(t, err)
	f.env = p.Environments[0]
	f.scope = store.Scope{OrganizationID: org.ID, EnvironmentID: f.env.ID}
	f.sub, _, err = db.SubscriberUpsert(t.Context(), &store.SubscriberUpsertParams{Scope: f.scope, SubscriberID: "ada",
		Email: store.Field{Set: true, Value: ptrTo("ada@example.com")}, Now: f.now()})
	require.NoError(t, err)
	f.wf = store.Workflow{ID: id.NewAt(f.at), OrganizationID: org.ID, EnvironmentID: f.env.ID, Key: "inbox", Name: "Inbox",
		Active: true, Severity: "none", CreatedAt: f.at, UpdatedAt: f.at,
		Steps: []store.Step{{ID: id.New(), StepID: "inbox", Name: "Inbox", Type: "in_app", ControlValues: map[string]any{"body": "hi"}}}}
	require.NoError(t, db.WorkflowCreate(t.Context(), &f.wf))
	f.version, err = db.r.Conn(t.Context())
	require.NoError(t, err)
	t.Cleanup(func() { f.version.Close() })
	return f
}

func ptrTo[T any](v T) *T { return &v }

// now is the fixture's clock: a minute later at each call.
func (f *gateFixture) now() time.Time {
	f.at = f.at.Add(time.Minute)
	return f.at
}

// dataVersion changes when another connection commits a change.
func (f *gateFixture) dataVersion(t *testing.T) int64 {
	var v int64
	require.NoError(t, f.version.QueryRowContext(t.Context(), "PRAGMA data_version").Scan(&v))
	return v
}

// message is a new in-app message of the subscriber, with a primary button.
func (f *gateFixture) message(t *testing.T) store.Message {
	now := f.now()
	m := store.Message{ID: id.NewAt(now), OrganizationID: f.scope.OrganizationID, EnvironmentID: f.env.ID,
		NotificationID: id.NewAt(now), JobID: id.NewAt(now), SubscriberID: f.sub.ID, WorkflowID: f.wf.ID,
		TemplateIdentifier: f.wf.Key, TransactionID: id.New(), Channel: "in_app", ProviderID: "svc", Content: "hi",
		CTA:    store.JSON(`{"type":"redirect","data":{},"action":{"status":"pending","buttons":[{"type":"primary","content":"Go"}]}}`),
		Status: "sent", Tags: []string{}, CreatedAt: now, UpdatedAt: now}
	require.NoError(t, f.db.InsertMessageForTest(t.Context(), &m))
	return m
}

// dueSnooze snoozes a new message and returns a time at which the snooze
// is over: the reads of the inbox end it (a write) before they read.
func (f *gateFixture) dueSnooze(t *testing.T) time.Time {
	m, now := f.message(t), f.now()
	_, err := f.db.InboxChangeOne(t.Context(), &store.InboxChangeParams{Scope: f.scope, SubscriberID: f.sub.ID,
		Action: store.InboxSnooze, ID: m.ID, SnoozeUntil: now.Add(time.Minute), Now: now})
	require.NoError(t, err)
	f.now()
	return f.now()
}

func (f *gateFixture) trigger(transactionID string, broadcast bool, now time.Time) *store.TriggerParams {
	return &store.TriggerParams{Scope: f.scope, Workflow: f.wf, TransactionID: transactionID,
		Recipients: []store.Recipient{{SubscriberID: f.sub.SubscriberID}}, Payload: store.JSON(`{}`), Broadcast: broadcast,
		ProviderFor: func(string) string { return "svc" }, Now: now}
}

// claimed triggers the workflow (a broadcast: a fan-out job too) and
// claims the jobs it queued.
func (f *gateFixture) claimed(t *testing.T, broadcast bool) []store.Claimed {
	now := f.now()
	_, err := f.db.Trigger(t.Context(), f.trigger(id.New(), broadcast, now))
	require.NoError(t, err)
	jobs, err := f.db.JobClaim(t.Context(), 100, time.Minute, now)
	require.NoError(t, err)
	require.NotEmpty(t, jobs)
	return jobs
}

func (f *gateFixture) integration(t *testing.T) store.Integration {
	now := f.now()
	in := store.Integration{ID: id.NewAt(now), OrganizationID: f.scope.OrganizationID, EnvironmentID: f.env.ID,
		ProviderID: "sendgrid", Channel: "email", Kind: "delivery", Name: "SendGrid", Identifier: id.New(),
		Credentials: store.JSON(`{"apiKey":"k","from":"no-reply@example.com"}`), Active: true, CreatedAt: now, UpdatedAt: now}
	require.NoError(t, f.db.IntegrationCreate(t.Context(), &in))
	return in
}

func (f *gateFixture) raw(t *testing.T, query string, args ...any) {
	_, err := f.db.w.ExecContext(t.Context(), query, args...)
	require.NoError(t, err)
}

// gatedWrite is one write method of the store: setup (gate free) makes
// what call needs to write.
type gatedWrite struct {
	setup func(t *testing.T)
	call  func(ctx context.Context) error
}

// writes are every write method of the store, each called so that it
// writes (or, for those that look first, so that it finds work).
func (f *gateFixture) writes() map[string]gatedWrite {
	var (
		msg      store.Message
		due      time.Time
		in       store.Integration
		jobs     []store.Claimed
		apiKey   store.APIKey
		doomed   string
		channels = store.ChannelSettings{ProviderID: "fcm", IntegrationID: id.New(),
			Credentials: store.ChannelCredentials{DeviceTokens: []string{"t1", "t2"}}}
	)
	newMessage := func(t *testing.T) { msg = f.message(t) }
	newSnooze := func(t *testing.T) { due = f.dueSnooze(t) }
	newIntegration := func(t *testing.T) { in = f.integration(t) }
	addChannel := func(t *testing.T) {
		_, err := f.db.SubscriberChannelUpdate(t.Context(), &store.ChannelUpdate{Scope: f.scope, SubscriberID: f.sub.SubscriberID,
			Channel: channels, MaxDeviceTokens: 100, Now: f.now()})
		require.NoError(t, err)
	}
	state := func(action string) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			_, err := f.db.InboxChangeOne(ctx, &store.InboxChangeParams{Scope: f.scope, SubscriberID: f.sub.ID, Action: action,
				ID: msg.ID, Now: f.at})
			return err
		}
	}
	return map[string]gatedWrite{
		// Tenancy.
		"Bootstrap": {call: func(ctx context.Context) error {
			_, err := f.db.Bootstrap(ctx, &store.BootstrapParams{Organization: store.Organization{ID: id.New(), Name: "Another"}})
			return err // looks, in its transaction, and finds an organization
		}},
		"EnvironmentUpdate": {call: func(ctx context.Context) error {
			_, err := f.db.EnvironmentUpdate(ctx, &store.EnvironmentUpdateParams{ID: f.env.ID, InboxHMACDisabled: ptrTo(true)})
			return err
		}},
		"APIKeyCreate": {setup: func(t *testing.T) {
			apiKey = store.APIKey{ID: id.New(), EnvironmentID: f.env.ID, Hash: id.New(), Prefix: "hk_", Key: "hk_" + id.New(),
				CreatedAt: f.now()}
		}, call: func(ctx context.Context) error { return f.db.APIKeyCreate(ctx, &apiKey) }},
		"APIKeyRevoke": {setup: func(t *testing.T) {
			apiKey = store.APIKey{ID: id.New(), EnvironmentID: f.env.ID, Hash: id.New(), Prefix: "hk_", Key: "hk_" + id.New(),
				CreatedAt: f.now()}
			require.NoError(t, f.db.APIKeyCreate(t.Context(), &apiKey))
		}, call: func(ctx context.Context) error {
			return f.db.APIKeyRevoke(ctx, &store.APIKeyRevokeParams{EnvironmentID: f.env.ID, ID: apiKey.ID, Now: f.at})
		}},
		"APIKeyKeepCopy": {setup: func(t *testing.T) {
			apiKey = store.APIKey{ID: id.New(), EnvironmentID: f.env.ID, Hash: id.New(), Prefix: "hk_", Key: "hk_" + id.New(),
				CreatedAt: f.now()}
			require.NoError(t, f.db.APIKeyCreate(t.Context(), &apiKey))
			f.raw(t, "UPDATE api_keys SET sealed_key = '' WHERE id = $1", apiKey.ID) // made before migration 0013
		}, call: func(ctx context.Context) error { return f.db.APIKeyKeepCopy(ctx, apiKey.ID, apiKey.Key) }},

		// Subscribers.
		"SubscriberUpsert": {call: func(ctx context.Context) error {
			_, _, err := f.db.SubscriberUpsert(ctx, &store.SubscriberUpsertParams{Scope: f.scope, SubscriberID: "grace", Now: f.at})
			return err
		}},
		"SubscriberBulkUpsert": {call: func(ctx context.Context) error {
			_, err := f.db.SubscriberBulkUpsert(ctx, &store.SubscriberBulkUpsertParams{Scope: f.scope,
				Items: []store.SubscriberUpsertParams{{Scope: f.scope, SubscriberID: "bulk-1"}}, Now: f.at})
			return err
		}},
		"SubscriberDelete": {setup: func(t *testing.T) {
			doomed = id.New()
			_, _, err := f.db.SubscriberUpsert(t.Context(), &store.SubscriberUpsertParams{Scope: f.scope, SubscriberID: doomed,
				Now: f.now()})
			require.NoError(t, err)
		}, call: func(ctx context.Context) error {
			return f.db.SubscriberDelete(ctx, &store.SubscriberDeleteParams{Scope: f.scope, SubscriberID: doomed, Now: f.at})
		}},
		"SubscriberChannelUpdate": {call: func(ctx context.Context) error {
			_, err := f.db.SubscriberChannelUpdate(ctx, &store.ChannelUpdate{Scope: f.scope, SubscriberID: f.sub.SubscriberID,
				Channel: channels, MaxDeviceTokens: 100, Now: f.at})
			return err
		}},
		"SubscriberChannelDelete": {setup: addChannel, call: func(ctx context.Context) error {
			_, err := f.db.SubscriberChannelDelete(ctx, &store.SubscriberChannelDeleteParams{Scope: f.scope,
				SubscriberID: f.sub.SubscriberID, ProviderID: "fcm", Now: f.at})
			return err
		}},
		"SubscriberTokensRemove": {setup: addChannel, call: func(ctx context.Context) error {
			_, err := f.db.SubscriberTokensRemove(ctx, &store.SubscriberTokensRemoveParams{Scope: f.scope,
				SubscriberID: f.sub.SubscriberID, IntegrationID: channels.IntegrationID, Tokens: []string{"t1"}, Now: f.at})
			return err
		}},
		"SubscriberSetOnline": {call: func(ctx context.Context) error {
			_, err := f.db.SubscriberSetOnline(ctx, &store.SubscriberOnlineParams{Scope: f.scope, SubscriberID: f.sub.SubscriberID,
				Online: true, Now: f.at})
			return err
		}},
		"SubscriberPreferenceUpdate": {call: func(ctx context.Context) error {
			_, err := f.db.SubscriberPreferenceUpdate(ctx, &store.SubscriberPreferenceUpdateParams{Scope: f.scope,
				SubscriberID: f.sub.SubscriberID, Changes: []store.PreferenceChange{{Channels: map[string]bool{"email": false}}},
				Now: f.at})
			return err
		}},
		"SubscriberBulkLoad": {call: func(ctx context.Context) error {
			return f.db.SubscriberBulkLoad(ctx, []store.Subscriber{{ID: id.New(), OrganizationID: f.scope.OrganizationID,
				EnvironmentID: f.env.ID, SubscriberID: "loaded-1", CreatedAt: f.at, UpdatedAt: f.at}})
		}},

		// Integrations and secrets.
		"IntegrationCreate": {setup: func(t *testing.T) {
			now := f.now()
			in = store.Integration{ID: id.NewAt(now), OrganizationID: f.scope.OrganizationID, EnvironmentID: f.env.ID,
				ProviderID: "sendgrid", Channel: "email", Kind: "delivery", Name: "SendGrid", Identifier: id.New(),
				Credentials: store.JSON(`{"apiKey":"k"}`), Active: true, CreatedAt: now, UpdatedAt: now}
		}, call: func(ctx context.Context) error { return f.db.IntegrationCreate(ctx, &in) }},
		"IntegrationUpdate": {setup: newIntegration, call: func(ctx context.Context) error {
			in.Name, in.UpdatedAt = "Renamed", f.at
			return f.db.IntegrationUpdate(ctx, &in)
		}},
		"IntegrationDelete": {setup: newIntegration, call: func(ctx context.Context) error {
			return f.db.IntegrationDelete(ctx, &store.IntegrationDeleteParams{Scope: f.scope, ID: in.ID, Now: f.at})
		}},
		"IntegrationSetPrimary": {setup: newIntegration, call: func(ctx context.Context) error {
			_, err := f.db.IntegrationSetPrimary(ctx, &store.IntegrationSetPrimaryParams{Scope: f.scope, ID: in.ID, Now: f.at})
			return err
		}},
		"IntegrationSealSecrets": {setup: func(t *testing.T) {
			newIntegration(t)
			f.raw(t, `UPDATE integrations SET configurations = '{"inboundWebhookSigningKey":"s"}' WHERE id = $1`, in.ID)
		}, call: func(ctx context.Context) error { _, err := f.db.IntegrationSealSecrets(ctx); return err }},
		"SecretCheck": {setup: func(t *testing.T) {
			f.raw(t, "DELETE FROM settings WHERE name = $1", settingSecretCheck) // a store without a check value
		}, call: func(ctx context.Context) error { return f.db.SecretCheck(ctx) }},
		"SecretRotate": {call: func(ctx context.Context) error {
			_, err := f.db.SecretRotate(ctx, f.db.sealer, f.db.sealer)
			return err
		}},

		// Idempotency.
		"IdempotencyBegin": {call: func(ctx context.Context) error {
			_, _, err := f.db.IdempotencyBegin(ctx, &store.IdempotencyBeginParams{Scope: f.scope, Key: id.New(), RequestHash: "h",
				Now: f.at})
			return err
		}},
		"IdempotencyFinish": {call: func(ctx context.Context) error {
			return f.db.IdempotencyFinish(ctx, &store.IdempotencyFinishParams{Scope: f.scope, Key: "key", Status: 200})
		}},
		"IdempotencyAbandon": {call: func(ctx context.Context) error { return f.db.IdempotencyAbandon(ctx, f.scope, "key") }},
		"IdempotencyPurge":   {call: func(ctx context.Context) error { _, err := f.db.IdempotencyPurge(ctx, f.at); return err }},

		// Promotion.
		"EnvironmentCreate": {call: func(ctx context.Context) error {
			return f.db.EnvironmentCreate(ctx, &store.EnvironmentCreateParams{Environment: store.Environment{ID: id.New(),
				OrganizationID: f.scope.OrganizationID, Name: "staging", CreatedAt: f.at}})
		}},
		"EnvironmentDelete": {setup: func(t *testing.T) {
			doomed = id.New()
			require.NoError(t, f.db.EnvironmentCreate(t.Context(), &store.EnvironmentCreateParams{Environment: store.Environment{ID: doomed,
				OrganizationID: f.scope.OrganizationID, Name: "doomed", CreatedAt: f.at}}))
		}, call: func(ctx context.Context) error {
			return f.db.EnvironmentDelete(ctx, &store.EnvironmentDeleteParams{OrganizationID: f.scope.OrganizationID, ID: doomed, Now: f.at})
		}},
		"EnvironmentPublish": {setup: func(t *testing.T) {
			doomed = id.New()
			require.NoError(t, f.db.EnvironmentCreate(t.Context(), &store.EnvironmentCreateParams{Environment: store.Environment{ID: doomed,
				OrganizationID: f.scope.OrganizationID, Name: "target", CreatedAt: f.at}}))
		}, call: func(ctx context.Context) error {
			_, err := f.db.EnvironmentPublish(ctx, &store.PublishParams{Source: f.scope,
				Target: store.Scope{OrganizationID: f.scope.OrganizationID, EnvironmentID: doomed}, Now: f.at})
			return err
		}},

		// Workflows.
		"WorkflowCreate": {call: func(ctx context.Context) error {
			wf := f.wf
			wf.ID, wf.Key = id.New(), "another"
			return f.db.WorkflowCreate(ctx, &wf)
		}},
		"WorkflowUpdate": {call: func(ctx context.Context) error {
			wf := f.wf
			wf.Name, wf.UpdatedAt = "Renamed", f.at
			return f.db.WorkflowUpdate(ctx, &wf)
		}},
		"WorkflowDelete": {setup: func(t *testing.T) {
			wf := f.wf
			wf.ID, wf.Key = id.New(), id.New()
			require.NoError(t, f.db.WorkflowCreate(t.Context(), &wf))
			doomed = wf.ID
		}, call: func(ctx context.Context) error {
			return f.db.WorkflowDelete(ctx, &store.WorkflowDeleteParams{Scope: f.scope, ID: doomed, Now: f.at})
		}},

		// Translations.
		"TranslationUpsert": {call: func(ctx context.Context) error {
			_, err := f.db.TranslationUpsert(ctx, &store.TranslationUpsertParams{TranslationKey: store.TranslationKey{Scope: f.scope,
				ResourceType: store.TranslationWorkflow, ResourceID: f.wf.Key, Locale: "fr_FR"}, Content: store.JSON(`{"a":"b"}`), Now: f.at})
			return err
		}},
		"TranslationMove": {call: func(ctx context.Context) error {
			return f.db.TranslationMove(ctx, &store.TranslationKey{Scope: f.scope, ResourceType: store.TranslationWorkflow,
				ResourceID: f.wf.Key}, "renamed")
		}},
		"TranslationDelete": {setup: func(t *testing.T) {
			_, err := f.db.TranslationUpsert(t.Context(), &store.TranslationUpsertParams{TranslationKey: store.TranslationKey{Scope: f.scope,
				ResourceType: store.TranslationWorkflow, ResourceID: f.wf.Key, Locale: "de_DE"}, Content: store.JSON(`{}`), Now: f.now()})
			require.NoError(t, err)
		}, call: func(ctx context.Context) error {
			return f.db.TranslationDelete(ctx, &store.TranslationKey{Scope: f.scope, ResourceType: store.TranslationWorkflow,
				ResourceID: f.wf.Key, Locale: "de_DE"})
		}},

		// The pipeline.
		"Trigger": {call: func(ctx context.Context) error {
			_, err := f.db.Trigger(ctx, f.trigger(id.New(), false, f.at))
			return err
		}},
		"TriggerMany": {call: func(ctx context.Context) error {
			for _, o := range f.db.TriggerMany(ctx, []*store.TriggerParams{f.trigger(id.New(), false, f.at)}) {
				if o.Err != nil {
					return o.Err
				}
			}
			return nil
		}},
		"TriggerCancel": {setup: func(t *testing.T) {
			doomed = id.New()
			_, err := f.db.Trigger(t.Context(), f.trigger(doomed, false, f.now()))
			require.NoError(t, err)
		}, call: func(ctx context.Context) error {
			_, err := f.db.TriggerCancel(ctx, &store.TriggerCancelParams{Scope: f.scope, TransactionID: doomed, Now: f.at})
			return err
		}},
		"JobClaim": {setup: func(t *testing.T) {
			_, err := f.db.Trigger(t.Context(), f.trigger(id.New(), false, f.now()))
			require.NoError(t, err)
		}, call: func(ctx context.Context) error {
			_, err := f.db.JobClaim(ctx, 100, time.Minute, f.at)
			return err
		}},
		"JobFinish": {setup: func(t *testing.T) { jobs = f.claimed(t, false) }, call: func(ctx context.Context) error {
			_, err := f.db.JobFinish(ctx, []store.JobOutcome{{Job: jobs[0].Job, Status: store.JobCompleted}}, f.at)
			return err
		}},
		"JobRescue": {setup: func(t *testing.T) { jobs = f.claimed(t, false); f.now(); f.now() }, call: func(ctx context.Context) error {
			_, err := f.db.JobRescue(ctx, f.at) // the lease (a minute) is over
			return err
		}},
		"JobResumeDue": {setup: func(t *testing.T) {
			jobs = f.claimed(t, false)
			_, err := f.db.JobFinish(t.Context(), []store.JobOutcome{{Job: jobs[0].Job, Status: store.JobDelayed,
				RunAt: f.at.Add(time.Second)}}, f.at)
			require.NoError(t, err)
			f.now()
		}, call: func(ctx context.Context) error { _, err := f.db.JobResumeDue(ctx, f.at); return err }},
		"DigestJoinMany": {setup: func(t *testing.T) { jobs = f.claimed(t, false) }, call: func(ctx context.Context) error {
			_, err := f.db.DigestJoinMany(ctx, []*store.DigestJoinParams{{Job: jobs[0].Job, WindowEnd: f.at.Add(time.Minute),
				Event: store.JSON(`{}`), Metadata: map[string]any{}, At: f.at, Now: f.at}})
			return err
		}},
		"BridgeSync": {call: func(ctx context.Context) error {
			_, err := f.db.BridgeSync(ctx, &store.BridgeSyncParams{Scope: f.scope, BridgeURL: "http://127.0.0.1:4000/api/novu",
				Workflows: []store.Workflow{{Key: "synced", Name: "Synced", Steps: []store.Step{{StepID: "inbox", Type: "in_app"}}}},
				Now:       f.at})
			return err
		}},
		"ThrottleCount": {call: func(ctx context.Context) error {
			_, err := f.db.ThrottleCount(ctx, &store.ThrottleCountParams{Scope: f.scope, SubscriberID: f.sub.ID,
				WorkflowID: f.wf.ID, StepID: "limit", WindowEnd: f.at.Add(time.Hour), Now: f.at})
			return err
		}},
		"FanoutRun": {setup: func(t *testing.T) { jobs = f.claimed(t, true) }, call: func(ctx context.Context) error {
			for _, c := range jobs {
				if c.Job.Type == "fanout" {
					_, err := f.db.FanoutRun(ctx, &store.FanoutRunParams{Job: c.Job, Limit: 100, Lease: time.Minute, Now: f.at})
					return err
				}
			}
			return errors.New("no fan-out job was claimed")
		}},

		// The inbox: v1 routes.
		"InsertMessageForTest": {call: func(ctx context.Context) error {
			m := store.Message{ID: id.New(), OrganizationID: f.scope.OrganizationID, EnvironmentID: f.env.ID, NotificationID: id.New(),
				JobID: id.New(), SubscriberID: f.sub.ID, WorkflowID: f.wf.ID, TransactionID: id.New(), Channel: "in_app",
				Status: "sent", CreatedAt: f.at, UpdatedAt: f.at}
			return f.db.InsertMessageForTest(ctx, &m)
		}},
		"MessageBulkLoad": {call: func(ctx context.Context) error {
			return f.db.MessageBulkLoad(ctx, []store.Message{{ID: id.New(), OrganizationID: f.scope.OrganizationID,
				EnvironmentID: f.env.ID, NotificationID: id.New(), JobID: id.New(), SubscriberID: f.sub.ID, WorkflowID: f.wf.ID,
				TransactionID: id.New(), Channel: "in_app", Status: "sent", CreatedAt: f.at, UpdatedAt: f.at}})
		}},
		"RebuildInboxCounts": {call: func(ctx context.Context) error { return f.db.RebuildInboxCounts(ctx) }},
		"MessageFeed": {setup: newSnooze, call: func(ctx context.Context) error {
			_, err := f.db.MessageFeed(ctx, &store.FeedParams{Scope: f.scope, SubscriberID: f.sub.ID, Limit: 10, Now: due})
			return err
		}},
		"MessageUnseenCount": {setup: newSnooze, call: func(ctx context.Context) error {
			_, err := f.db.MessageUnseenCount(ctx, &store.MessageUnseenCountParams{Scope: f.scope, SubscriberID: f.sub.ID, Now: due})
			return err
		}},
		"MessageMarkAs": {setup: newMessage, call: func(ctx context.Context) error {
			_, err := f.db.MessageMarkAs(ctx, &store.MessageMarkAsParams{Scope: f.scope, SubscriberID: f.sub.ID, IDs: []string{msg.ID},
				MarkAs: store.MarkRead, Now: f.at})
			return err
		}},
		"MessageMarkAll": {setup: newMessage, call: func(ctx context.Context) error {
			_, err := f.db.MessageMarkAll(ctx, &store.MessageMarkAllParams{Scope: f.scope, SubscriberID: f.sub.ID,
				MarkAs: store.MarkSeen, Now: f.at})
			return err
		}},
		"MessageSetAction": {setup: newMessage, call: func(ctx context.Context) error {
			_, err := f.db.MessageSetAction(ctx, &store.MessageSetActionParams{Scope: f.scope, SubscriberID: f.sub.ID,
				MessageID: msg.ID, Action: store.JSON(`{"status":"done","result":{"type":"primary"}}`), Now: f.at})
			return err
		}},
		"MessageDelete": {setup: newMessage, call: func(ctx context.Context) error {
			return f.db.MessageDelete(ctx, &store.MessageDeleteParams{Scope: f.scope, MessageID: msg.ID, Now: f.at})
		}},
		"MessageDeleteByTransaction": {setup: newMessage, call: func(ctx context.Context) error {
			_, err := f.db.MessageDeleteByTransaction(ctx, &store.MessageDeleteByTransactionParams{Scope: f.scope,
				TransactionID: msg.TransactionID, Now: f.at})
			return err
		}},

		// The inbox: v2 and the inbox clients.
		"InboxList": {setup: newSnooze, call: func(ctx context.Context) error {
			_, err := f.db.InboxList(ctx, &store.InboxListParams{Scope: f.scope, SubscriberID: f.sub.ID, Limit: 10, Now: due})
			return err
		}},
		"InboxCount": {setup: newSnooze, call: func(ctx context.Context) error {
			_, err := f.db.InboxCount(ctx, &store.InboxCountParams{Scope: f.scope, SubscriberID: f.sub.ID,
				Filters: []store.InboxFilter{{}}, Now: due})
			return err
		}},
		"InboxUnsnoozeDue": {setup: newSnooze, call: func(ctx context.Context) error {
			_, err := f.db.InboxUnsnoozeDue(ctx, 100, due)
			return err
		}},
		"InboxChangeOne": {setup: newMessage, call: state(store.InboxArchive)},
		"InboxChangeMany": {setup: newMessage, call: func(ctx context.Context) error {
			_, err := f.db.InboxChangeMany(ctx, &store.InboxChangeParams{Scope: f.scope, SubscriberID: f.sub.ID,
				Action: store.InboxSeen, IDs: []string{msg.ID}, Now: f.at})
			return err
		}},
		"InboxCompleteAction": {setup: newMessage, call: func(ctx context.Context) error {
			_, err := f.db.InboxCompleteAction(ctx, &store.InboxActionParams{Scope: f.scope, SubscriberID: f.sub.ID,
				MessageID: msg.ID, Button: "primary", Done: true, Now: f.at})
			return err
		}},

		// Topics.
		"TopicUpsert": {call: func(ctx context.Context) error {
			_, _, err := f.db.TopicUpsert(ctx, &store.TopicUpsertParams{Scope: f.scope, Key: "news", Now: f.at})
			return err
		}},
		"TopicSubscribe": {call: func(ctx context.Context) error {
			_, err := f.db.TopicSubscribe(ctx, &store.TopicSubscribeParams{Scope: f.scope, Key: "news",
				Members: []store.TopicMember{{SubscriberID: f.sub.SubscriberID}}, Now: f.at})
			return err
		}},
		"TopicSubscriptionUpdate": {setup: func(t *testing.T) {
			_, err := f.db.TopicSubscribe(t.Context(), &store.TopicSubscribeParams{Scope: f.scope, Key: "updates",
				Members: []store.TopicMember{{SubscriberID: f.sub.SubscriberID}}, Now: f.now()})
			require.NoError(t, err)
		}, call: func(ctx context.Context) error {
			ref := store.TopicSubscriptionRef{Scope: f.scope, Key: "updates", SubscriberID: f.sub.SubscriberID}
			_, err := f.db.TopicSubscriptionUpdate(ctx, &store.TopicSubscriptionUpdateParams{TopicSubscriptionRef: ref,
				Name: store.Field{Set: true, Value: ptrTo("Updates")}, Now: f.at})
			return err
		}},
		"TopicUnsubscribe": {setup: func(t *testing.T) {
			_, err := f.db.TopicSubscribe(t.Context(), &store.TopicSubscribeParams{Scope: f.scope, Key: "leaving",
				Members: []store.TopicMember{{SubscriberID: f.sub.SubscriberID}}, Now: f.now()})
			require.NoError(t, err)
		}, call: func(ctx context.Context) error {
			_, err := f.db.TopicUnsubscribe(ctx, &store.TopicUnsubscribeParams{Scope: f.scope, Key: "leaving",
				Members: []store.TopicMember{{SubscriberID: f.sub.SubscriberID}}})
			return err
		}},
		"TopicDelete": {setup: func(t *testing.T) {
			_, _, err := f.db.TopicUpsert(t.Context(), &store.TopicUpsertParams{Scope: f.scope, Key: "doomed", Now: f.now()})
			require.NoError(t, err)
		}, call: func(ctx context.Context) error { return f.db.TopicDelete(ctx, f.scope, "doomed") }},
		// Environment variables and contexts.
		"EnvironmentVariableCreate": {call: func(ctx context.Context) error {
			_, err := f.db.EnvironmentVariableCreate(ctx, &store.EnvironmentVariableCreateParams{Scope: f.scope, Key: "BASE_URL",
				Type: "string", IsSecret: true, Values: []store.EnvironmentVariableValue{{EnvironmentID: f.env.ID, Value: "x"}}, Now: f.at})
			return err
		}},
		"EnvironmentVariableUpdate": {setup: func(t *testing.T) {
			_, err := f.db.EnvironmentVariableCreate(t.Context(), &store.EnvironmentVariableCreateParams{Scope: f.scope, Key: "CHANGED",
				Type: "string", Now: f.now()})
			require.NoError(t, err)
		}, call: func(ctx context.Context) error {
			_, err := f.db.EnvironmentVariableUpdate(ctx, &store.EnvironmentVariableUpdateParams{Scope: f.scope, Key: "CHANGED",
				Values: []store.EnvironmentVariableValue{{EnvironmentID: f.env.ID, Value: "y"}}, Now: f.at})
			return err
		}},
		"EnvironmentVariableDelete": {setup: func(t *testing.T) {
			_, err := f.db.EnvironmentVariableCreate(t.Context(), &store.EnvironmentVariableCreateParams{Scope: f.scope, Key: "DOOMED",
				Type: "string", Now: f.now()})
			require.NoError(t, err)
		}, call: func(ctx context.Context) error { return f.db.EnvironmentVariableDelete(ctx, f.scope, "DOOMED") }},
		"ContextCreate": {call: func(ctx context.Context) error {
			_, err := f.db.ContextCreate(ctx, &store.ContextCreateParams{Scope: f.scope,
				ContextRef: store.ContextRef{Type: "tenant", ContextID: "acme"}, Now: f.at})
			return err
		}},
		"ContextUpdate": {setup: func(t *testing.T) {
			_, err := f.db.ContextCreate(t.Context(), &store.ContextCreateParams{Scope: f.scope,
				ContextRef: store.ContextRef{Type: "tenant", ContextID: "changed"}, Now: f.now()})
			require.NoError(t, err)
		}, call: func(ctx context.Context) error {
			_, err := f.db.ContextUpdate(ctx, &store.ContextUpdateParams{Scope: f.scope,
				ContextRef: store.ContextRef{Type: "tenant", ContextID: "changed", Data: store.JSON(`{"a":1}`)}, Now: f.at})
			return err
		}},
		"ContextDelete": {setup: func(t *testing.T) {
			_, err := f.db.ContextCreate(t.Context(), &store.ContextCreateParams{Scope: f.scope,
				ContextRef: store.ContextRef{Type: "tenant", ContextID: "doomed"}, Now: f.now()})
			require.NoError(t, err)
		}, call: func(ctx context.Context) error { return f.db.ContextDelete(ctx, f.scope, "tenant", "doomed") }},
		"ContextResolve": {call: func(ctx context.Context) error {
			_, err := f.db.ContextResolve(ctx, &store.ContextResolveParams{Scope: f.scope,
				Refs: []store.ContextRef{{Type: "project", ContextID: "new"}}, Now: f.at})
			return err
		}},
	}
}
