package sqlstore_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/store/sqlstore"
	"github.com/herald-notify/herald/internal/testdb"
)

// TestBridgeSync: a sync upserts the discovered workflows (a re-sync keeps
// their _id and, where a stepId stays, the step's _id and control values),
// deletes the synced ones no longer listed, never touches or replaces a
// workflow made through the API, keeps the bridge URL per environment, and
// writes nothing when it is refused.
func TestBridgeSync(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		tn := setup(t, db)
		now := tn.Clock.Now()
		made := store.Workflow{ID: id.NewAt(now), OrganizationID: tn.Org.ID, EnvironmentID: tn.EnvA.ID, Key: "made", Name: "Made",
			Active: true, Severity: "none", CreatedAt: now, UpdatedAt: now, Steps: []store.Step{{ID: id.New(), StepID: "s", Type: "in_app"}}}
		require.NoError(t, db.WorkflowCreate(ctx, &made))
		discovered := func(keys ...string) []store.Workflow {
			var out []store.Workflow
			for _, k := range keys {
				out = append(out, store.Workflow{Key: k, Name: "Flow " + k, Tags: []string{"code"}, PayloadSchema: store.JSON(`{"type":"object"}`),
					Steps: []store.Step{{StepID: "inbox", Type: "in_app", ControlSchema: store.JSON(`{"type":"object"}`)},
						{StepID: "mail", Type: "email"}}})
			}
			return out
		}
		sync := func(scope store.Scope, url string, wfs []store.Workflow) ([]store.Workflow, error) {
			return db.BridgeSync(ctx, &store.BridgeSyncParams{Scope: scope, BridgeURL: url, Workflows: wfs, Now: tn.Clock.Now()})
		}
		first, err := sync(tn.A, "http://127.0.0.1:4000/api/novu", discovered("a", "b"))
		require.NoError(t, err)
		require.Len(t, first, 2)
		a, err := db.WorkflowGet(ctx, tn.A, "a")
		require.NoError(t, err)
		require.Equal(t, store.OriginBridge, a.Origin)
		require.Equal(t, "Flow a", a.Name)
		require.JSONEq(t, `{"type":"object"}`, string(a.Steps[0].ControlSchema))
		env, err := db.EnvironmentGetByID(ctx, tn.EnvA.ID)
		require.NoError(t, err)
		require.Equal(t, "http://127.0.0.1:4000/api/novu", env.BridgeURL)

		// Control values set on a synced step survive a re-sync; b goes.
		a.Steps[0].ControlValues = map[string]any{"subject": "Kept"}
		require.NoError(t, db.WorkflowUpdate(ctx, &a))
		again := discovered("a")
		again[0].Steps = append([]store.Step{{StepID: "new", Type: "sms"}}, again[0].Steps...)
		_, err = sync(tn.A, "http://127.0.0.1:4001/api/novu", again)
		require.NoError(t, err)
		a2, err := db.WorkflowGet(ctx, tn.A, "a")
		require.NoError(t, err)
		require.Equal(t, a.ID, a2.ID)
		require.Equal(t, []string{"new", "inbox", "mail"}, []string{a2.Steps[0].StepID, a2.Steps[1].StepID, a2.Steps[2].StepID})
		require.Equal(t, a.Steps[0].ID, a2.Steps[1].ID, "the step keeps its _id")
		require.Equal(t, map[string]any{"subject": "Kept"}, a2.Steps[1].ControlValues)
		_, err = db.WorkflowGet(ctx, tn.A, "b")
		require.ErrorIs(t, err, store.ErrNotFound, "a workflow the bridge no longer lists is deleted")
		_, err = db.WorkflowGet(ctx, tn.A, "made")
		require.NoError(t, err, "a workflow made through the API is never deleted by a sync")

		// A discovered workflowId held by a workflow made through the API:
		// refused, nothing written.
		_, err = sync(tn.A, "http://127.0.0.1:4002/api/novu", discovered("c", "made"))
		e, ok := store.IsMadeElsewhere(err)
		require.True(t, ok, "%v", err)
		require.Equal(t, "made", e.Key)
		_, err = db.WorkflowGet(ctx, tn.A, "c")
		require.ErrorIs(t, err, store.ErrNotFound)
		env, err = db.EnvironmentGetByID(ctx, tn.EnvA.ID)
		require.NoError(t, err)
		require.Equal(t, "http://127.0.0.1:4001/api/novu", env.BridgeURL, "the refused sync kept the URL")

		// Another environment: its own workflows and URL.
		_, err = sync(tn.B, "http://127.0.0.1:5000/api/novu", discovered("a"))
		require.NoError(t, err)
		b, err := db.WorkflowGet(ctx, tn.B, "a")
		require.NoError(t, err)
		require.NotEqual(t, a.ID, b.ID)
		// An empty discover deletes every synced workflow of that environment only.
		_, err = sync(tn.B, "http://127.0.0.1:5000/api/novu", nil)
		require.NoError(t, err)
		_, err = db.WorkflowGet(ctx, tn.B, "a")
		require.ErrorIs(t, err, store.ErrNotFound)
		_, err = db.WorkflowGet(ctx, tn.A, "a")
		require.NoError(t, err)
	})
}
