package sqlstore_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/id"
	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/store/sqlstore"
	"github.com/herald-notify/herald/internal/testdb"
)

func newLayout(sc store.Scope, key, name string, at time.Time) store.Layout {
	return store.Layout{ID: id.NewAt(at), OrganizationID: sc.OrganizationID, EnvironmentID: sc.EnvironmentID, Key: key,
		Name: name, CreatedAt: at, UpdatedAt: at}
}

// TestLayouts: the first layout of an environment is its default, keys are
// unique per environment, lists page, order and search, and environments
// never see each other's layouts.
func TestLayouts(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		tn := setup(t, db)
		first := newLayout(tn.A, "main", "Main layout", base)
		require.NoError(t, db.LayoutCreate(ctx, &first))
		require.True(t, first.IsDefault, "the environment's first layout is its default")
		second := newLayout(tn.A, "promo", "Promo", base.Add(time.Second))
		second.ControlValues = store.JSON(`{"email":{"body":"<html><body>{{content}}</body></html>","editorType":"html"}}`)
		require.NoError(t, db.LayoutCreate(ctx, &second))
		require.False(t, second.IsDefault)
		dup := newLayout(tn.A, "promo", "Again", base)
		require.ErrorIs(t, db.LayoutCreate(ctx, &dup), store.ErrConflict)
		inB := newLayout(tn.B, "promo", "Promo in B", base)
		require.NoError(t, db.LayoutCreate(ctx, &inB))
		require.True(t, inB.IsDefault, "each environment has its own default")

		for _, key := range []string{"promo", second.ID} {
			got, err := db.LayoutGet(ctx, tn.A, key)
			require.NoError(t, err)
			require.Equal(t, second, got)
		}
		_, err := db.LayoutGet(ctx, tn.B, second.ID)
		require.ErrorIs(t, err, store.ErrNotFound, "another environment's layout is not found")

		list, total, err := db.LayoutList(ctx, &store.LayoutListParams{Scope: tn.A, Limit: 10, OrderBy: "createdAt", Desc: true})
		require.NoError(t, err)
		require.Equal(t, 2, total)
		require.Equal(t, []store.Layout{second, first}, list)
		list, _, err = db.LayoutList(ctx, &store.LayoutListParams{Scope: tn.A, Limit: 10, OrderBy: "name"})
		require.NoError(t, err)
		require.Equal(t, []string{"main", "promo"}, []string{list[0].Key, list[1].Key})
		list, total, err = db.LayoutList(ctx, &store.LayoutListParams{Scope: tn.A, Limit: 1, Offset: 1, OrderBy: "createdAt"})
		require.NoError(t, err)
		require.Equal(t, 2, total)
		require.Equal(t, []store.Layout{second}, list)
		list, total, err = db.LayoutList(ctx, &store.LayoutListParams{Scope: tn.A, Limit: 10, Query: "MAIN"})
		require.NoError(t, err)
		require.Equal(t, 1, total, "the search ignores case")
		require.Equal(t, "main", list[0].Key)
		_, total, err = db.LayoutList(ctx, &store.LayoutListParams{Scope: tn.A, Limit: 10, Query: "%"})
		require.NoError(t, err)
		require.Zero(t, total, "LIKE metacharacters are literal")

		second.Name, second.ControlValues, second.UpdatedAt = "Renamed", nil, base.Add(time.Hour)
		require.NoError(t, db.LayoutUpdate(ctx, &second))
		got, err := db.LayoutGet(ctx, tn.A, "promo")
		require.NoError(t, err)
		require.Equal(t, second, got)
		wrong := second
		wrong.EnvironmentID = tn.EnvB.ID
		require.ErrorIs(t, db.LayoutUpdate(ctx, &wrong), store.ErrNotFound)
	})
}

// TestLayoutDelete: the default cannot be deleted; deleting a layout removes
// its key from the e-mail steps that name it, and only from those.
func TestLayoutDelete(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		tn := setup(t, db)
		def := newLayout(tn.A, "main", "Main", base)
		require.NoError(t, db.LayoutCreate(ctx, &def))
		promo := newLayout(tn.A, "promo", "Promo", base)
		require.NoError(t, db.LayoutCreate(ctx, &promo))
		wf := func(sc store.Scope, key, name string, steps ...store.Step) store.Workflow {
			w := store.Workflow{ID: id.New(), OrganizationID: sc.OrganizationID, EnvironmentID: sc.EnvironmentID, Key: key,
				Name: name, Active: true, Severity: "none", Steps: steps, CreatedAt: base, UpdatedAt: base}
			require.NoError(t, db.WorkflowCreate(ctx, &w))
			return w
		}
		mail := func(layout string) store.Step {
			return store.Step{ID: id.New(), StepID: "mail-" + layout, Name: "Mail", Type: "email",
				ControlValues: map[string]any{"subject": "S", "body": "B", "layoutId": layout},
				ControlOrder:  []string{"subject", "layoutId", "body"}}
		}
		inApp := store.Step{ID: id.New(), StepID: "inbox", Name: "Inbox", Type: "in_app",
			ControlValues: map[string]any{"body": "promo", "layoutId": "promo"}}
		users := wf(tn.A, "b-user", "B user", mail("promo"), mail("main"), inApp)
		wf(tn.A, "a-user", "A user", mail("promo"))
		wf(tn.A, "other", "Other", mail("main"), inApp)
		wf(tn.B, "in-b", "In B", mail("promo"))

		uses, err := db.LayoutUsage(ctx, tn.A, "promo")
		require.NoError(t, err)
		require.Equal(t, []store.LayoutUse{{WorkflowKey: "a-user", Name: "A user"}, {WorkflowKey: "b-user", Name: "B user"}}, uses,
			"by name; an in-app step's layoutId is not a use, nor another environment's workflow")

		err = db.LayoutDelete(ctx, &store.LayoutDeleteParams{Scope: tn.A, ID: def.ID, Now: base})
		require.ErrorIs(t, err, store.ErrConflict, "the default layout cannot be deleted")
		require.ErrorIs(t, db.LayoutDelete(ctx, &store.LayoutDeleteParams{Scope: tn.B, ID: promo.ID, Now: base}), store.ErrNotFound)

		// Translations: the deleted layout's go with it; the others' stay.
		tr := func(sc store.Scope, typ, res, locale string) store.TranslationKey {
			return store.TranslationKey{Scope: sc, ResourceType: typ, ResourceID: res, Locale: locale}
		}
		kept := []store.TranslationKey{tr(tn.A, store.TranslationLayout, "main", "en_US"),
			tr(tn.A, store.TranslationWorkflow, "promo", "en_US"), tr(tn.B, store.TranslationLayout, "promo", "en_US")}
		gone := []store.TranslationKey{tr(tn.A, store.TranslationLayout, "promo", "en_US"), tr(tn.A, store.TranslationLayout, "promo", "fr_FR")}
		for _, k := range append(append([]store.TranslationKey{}, kept...), gone...) {
			_, err := db.TranslationUpsert(ctx, &store.TranslationUpsertParams{TranslationKey: k, Content: store.JSON(`{"a":"b"}`), Now: base})
			require.NoError(t, err)
		}

		later := base.Add(time.Hour)
		require.NoError(t, db.LayoutDelete(ctx, &store.LayoutDeleteParams{Scope: tn.A, ID: promo.ID, Now: later}))
		for _, k := range gone {
			_, err := db.TranslationGet(ctx, &k)
			require.ErrorIs(t, err, store.ErrNotFound, "%+v", k)
		}
		for _, k := range kept {
			_, err := db.TranslationGet(ctx, &k)
			require.NoError(t, err, "%+v", k)
		}
		_, err = db.LayoutGet(ctx, tn.A, "promo")
		require.ErrorIs(t, err, store.ErrNotFound)
		got, err := db.WorkflowGet(ctx, tn.A, "b-user")
		require.NoError(t, err)
		require.Equal(t, map[string]any{"subject": "S", "body": "B"}, got.Steps[0].ControlValues, "layoutId removed")
		require.Equal(t, []string{"subject", "body"}, got.Steps[0].ControlOrder)
		require.Equal(t, "main", got.Steps[1].ControlValues["layoutId"], "another layout's steps are kept")
		require.Equal(t, "promo", got.Steps[2].ControlValues["layoutId"], "only e-mail steps use layouts")
		require.Equal(t, later, got.UpdatedAt)
		require.Equal(t, users.Steps[0].ID, got.Steps[0].ID)
		uses, err = db.LayoutUsage(ctx, tn.A, "promo")
		require.NoError(t, err)
		require.Empty(t, uses)
		inB, err := db.WorkflowGet(ctx, tn.B, "in-b")
		require.NoError(t, err)
		require.Equal(t, "promo", inB.Steps[0].ControlValues["layoutId"], "another environment's steps are untouched")
	})
}

// TestLayoutDefaultConcurrent: concurrent first layouts make one default.
func TestLayoutDefaultConcurrent(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		tn := setup(t, db)
		const n = 8
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				l := newLayout(tn.A, id.New(), "L", base)
				errs[i] = db.LayoutCreate(t.Context(), &l)
			}()
		}
		wg.Wait()
		for _, err := range errs {
			require.NoError(t, err)
		}
		list, total, err := db.LayoutList(t.Context(), &store.LayoutListParams{Scope: tn.A, Limit: 100})
		require.NoError(t, err)
		require.Equal(t, n, total)
		defaults := 0
		for _, l := range list {
			if l.IsDefault {
				defaults++
			}
		}
		require.Equal(t, 1, defaults)
	})
}
