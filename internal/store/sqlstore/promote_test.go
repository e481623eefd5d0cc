package sqlstore_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/store/sqlstore"
	"github.com/herald-notify/herald/internal/testdb"
)

func promoteWorkflow(t *testing.T, db *sqlstore.DB, s store.Scope, key, body string, at time.Time) store.Workflow {
	t.Helper()
	w := store.Workflow{ID: id.NewAt(at), OrganizationID: s.OrganizationID, EnvironmentID: s.EnvironmentID, Key: key, Name: "WF " + key,
		Tags: []string{"t-" + key}, Active: true, Severity: "none", CreatedAt: at, UpdatedAt: at,
		Steps: []store.Step{{ID: id.New(), StepID: "inbox", Name: "Inbox", Type: "in_app", ControlValues: map[string]any{"body": body}}}}
	require.NoError(t, db.WorkflowCreate(t.Context(), &w))
	return w
}

// differing lists the keys whose resources differ between two environments.
func differing(t *testing.T, db *sqlstore.DB, a, b store.Scope) []string {
	t.Helper()
	src, err := db.EnvironmentResources(t.Context(), a)
	require.NoError(t, err)
	dst, err := db.EnvironmentResources(t.Context(), b)
	require.NoError(t, err)
	byKey := map[string]store.Resource{}
	for _, r := range dst {
		byKey[r.Key] = r
	}
	var out []string
	for _, r := range src {
		if d, ok := byKey[r.Key]; !ok || !r.Same(d) {
			out = append(out, r.Key)
		}
		delete(byKey, r.Key)
	}
	for k := range byKey {
		out = append(out, k)
	}
	return out
}

func TestEnvironmentPublish(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		tn := setup(t, db)
		now := tn.Clock.Now()
		promoteWorkflow(t, db, tn.A, "welcome", "Hi {{subscriber.firstName}}", now)
		promoteWorkflow(t, db, tn.A, "digest", "Your digest", now)
		gone := promoteWorkflow(t, db, tn.B, "legacy", "Old", now)
		require.ElementsMatch(t, []string{"welcome", "digest", "legacy"}, differing(t, db, tn.A, tn.B))

		res, err := db.EnvironmentPublish(t.Context(), &store.PublishParams{Source: tn.A, Target: tn.B, Now: tn.Clock.Advance(time.Minute)})
		require.NoError(t, err)
		actions := map[string]string{}
		for _, r := range res {
			actions[r.Key] = r.Action
		}
		require.Equal(t, map[string]string{"welcome": "created", "digest": "created", "legacy": "deleted"}, actions)
		require.Empty(t, differing(t, db, tn.A, tn.B))
		_, err = db.WorkflowGet(t.Context(), tn.B, gone.ID)
		require.ErrorIs(t, err, store.ErrNotFound)
		copied, err := db.WorkflowGet(t.Context(), tn.B, "welcome")
		require.NoError(t, err)
		src, err := db.WorkflowGet(t.Context(), tn.A, "welcome")
		require.NoError(t, err)
		require.NotEqual(t, src.ID, copied.ID)
		require.NotEqual(t, src.Steps[0].ID, copied.Steps[0].ID)
		require.Equal(t, src.Steps[0].ControlValues, copied.Steps[0].ControlValues)

		// Publishing again changes nothing.
		res, err = db.EnvironmentPublish(t.Context(), &store.PublishParams{Source: tn.A, Target: tn.B, Now: tn.Clock.Advance(time.Minute)})
		require.NoError(t, err)
		require.Empty(t, res)
		again, err := db.WorkflowGet(t.Context(), tn.B, "welcome")
		require.NoError(t, err)
		require.Equal(t, copied.UpdatedAt, again.UpdatedAt)

		// An update keeps the target's ids; Only limits the publish.
		src.Name, src.UpdatedAt = "Welcome!", tn.Clock.Advance(time.Minute)
		require.NoError(t, db.WorkflowUpdate(t.Context(), &src))
		promoteWorkflow(t, db, tn.A, "later", "Later", tn.Clock.Now())
		res, err = db.EnvironmentPublish(t.Context(), &store.PublishParams{Source: tn.A, Target: tn.B,
			Only: []store.ResourceRef{{Kind: store.ResourceWorkflow, Key: "welcome"}}, Now: tn.Clock.Advance(time.Minute)})
		require.NoError(t, err)
		require.Len(t, res, 1)
		require.Equal(t, store.Published{ResourceRef: store.ResourceRef{Kind: "workflow", Key: "welcome"}, Name: "Welcome!",
			Action: "updated", TargetID: copied.ID}, res[0])
		updated, err := db.WorkflowGet(t.Context(), tn.B, "welcome")
		require.NoError(t, err)
		require.Equal(t, "Welcome!", updated.Name)
		require.Equal(t, copied.Steps[0].ID, updated.Steps[0].ID)
		require.Equal(t, []string{"later"}, differing(t, db, tn.A, tn.B))

		// Another organization's environment is not found.
		other := otherOrganization(t, db)
		_, err = db.EnvironmentPublish(t.Context(), &store.PublishParams{Source: tn.A, Target: store.Scope{
			OrganizationID: tn.Org.ID, EnvironmentID: other.EnvironmentID}, Now: tn.Clock.Now()})
		require.ErrorIs(t, err, store.ErrNotFound)
	})
}

// TestEnvironmentPublishIsAtomic: a failure halfway through a publish
// changes nothing in the target.
func TestEnvironmentPublishIsAtomic(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		tn := setup(t, db)
		now := tn.Clock.Now()
		for _, k := range []string{"a-first", "b-second", "c-third"} {
			promoteWorkflow(t, db, tn.A, k, "Hi "+k, now)
		}
		promoteWorkflow(t, db, tn.B, "b-second", "stale", now)
		promoteWorkflow(t, db, tn.B, "z-legacy", "old", now)
		before, err := db.EnvironmentResources(t.Context(), tn.B)
		require.NoError(t, err)

		boom := errors.New("boom")
		var seen []string
		sqlstore.FailPublishInto(tn.B.EnvironmentID, func(r store.ResourceRef) error {
			seen = append(seen, r.Key)
			if r.Key == "c-third" {
				return boom
			}
			return nil
		})
		_, err = db.EnvironmentPublish(t.Context(), &store.PublishParams{Source: tn.A, Target: tn.B, Now: tn.Clock.Advance(time.Minute)})
		sqlstore.FailPublishInto(tn.B.EnvironmentID, nil)
		require.ErrorIs(t, err, boom)
		require.Equal(t, []string{"a-first", "b-second", "c-third"}, seen, "two resources were written before the failure")
		after, err := db.EnvironmentResources(t.Context(), tn.B)
		require.NoError(t, err)
		require.Equal(t, before, after, "the failed publish changed nothing")
		_, err = db.WorkflowGet(t.Context(), tn.B, "a-first")
		require.ErrorIs(t, err, store.ErrNotFound, "not even through the workflow cache")

		_, err = db.EnvironmentPublish(t.Context(), &store.PublishParams{Source: tn.A, Target: tn.B, Now: tn.Clock.Advance(time.Minute)})
		require.NoError(t, err)
		require.Empty(t, differing(t, db, tn.A, tn.B))
	})
}

func TestEnvironmentCreateAndDelete(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		tn := setup(t, db)
		now := tn.Clock.Now()
		env := store.Environment{ID: id.NewAt(now), OrganizationID: tn.Org.ID, Name: "staging", Identifier: "app_staging0123456789",
			ParentID: tn.EnvA.ID, Color: "#ff00aa", CreatedAt: now}
		key := store.APIKey{ID: id.New(), EnvironmentID: env.ID, Hash: "hash-" + id.New(), Prefix: "hk_stag", Key: "hk_staging", CreatedAt: now}
		require.NoError(t, db.EnvironmentCreate(t.Context(), &store.EnvironmentCreateParams{Environment: env, APIKeys: []store.APIKey{key}}))
		got, err := db.EnvironmentGetByID(t.Context(), env.ID)
		require.NoError(t, err)
		require.Equal(t, env.ParentID, got.ParentID)
		require.Equal(t, "#ff00aa", got.Color)
		_, kenv, err := db.APIKeyGetByHash(t.Context(), key.Hash)
		require.NoError(t, err)
		require.Equal(t, env.ID, kenv.ID)

		dup := env
		dup.ID, dup.Identifier = id.New(), "app_other0123456789ab"
		require.ErrorIs(t, db.EnvironmentCreate(t.Context(), &store.EnvironmentCreateParams{Environment: dup}), store.ErrConflict)

		name := "qa"
		_, err = db.EnvironmentUpdate(t.Context(), &store.EnvironmentUpdateParams{ID: env.ID, Name: &name})
		require.NoError(t, err)
		taken := "development"
		_, err = db.EnvironmentUpdate(t.Context(), &store.EnvironmentUpdateParams{ID: env.ID, Name: &taken})
		require.ErrorIs(t, err, store.ErrConflict)

		other := otherOrganization(t, db)
		require.ErrorIs(t, db.EnvironmentDelete(t.Context(), &store.EnvironmentDeleteParams{OrganizationID: other.OrganizationID,
			ID: env.ID, Now: now}), store.ErrNotFound)
		require.NoError(t, db.EnvironmentDelete(t.Context(), &store.EnvironmentDeleteParams{OrganizationID: tn.Org.ID, ID: env.ID, Now: now}))
		_, err = db.EnvironmentGetByID(t.Context(), env.ID)
		require.ErrorIs(t, err, store.ErrNotFound)
		_, _, err = db.APIKeyGetByHash(t.Context(), key.Hash)
		require.ErrorIs(t, err, store.ErrNotFound)
		envs, err := db.EnvironmentList(t.Context(), tn.Org.ID)
		require.NoError(t, err)
		require.Len(t, envs, 2)
		require.ErrorIs(t, db.EnvironmentDelete(t.Context(), &store.EnvironmentDeleteParams{OrganizationID: tn.Org.ID, ID: env.ID, Now: now}),
			store.ErrNotFound)
		// The name is free again.
		again := env
		again.ID, again.Name, again.Identifier = id.New(), "qa", "app_again0123456789ab"
		require.NoError(t, db.EnvironmentCreate(t.Context(), &store.EnvironmentCreateParams{Environment: again}))

		tags, err := db.WorkflowTags(t.Context(), tn.A)
		require.NoError(t, err)
		require.Empty(t, tags)
		promoteWorkflow(t, db, tn.A, "x", "b", now)
		promoteWorkflow(t, db, tn.A, "y", "b", now)
		tags, err = db.WorkflowTags(t.Context(), tn.A)
		require.NoError(t, err)
		require.Equal(t, []string{"t-x", "t-y"}, tags)
	})
}
