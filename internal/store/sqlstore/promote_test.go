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
		// Layouts and translations are written first, then fail with the rest.
		promoteLayout(t, db, tn.A, "brand", now)
		promoteTranslation(t, db, tn.A, store.TranslationLayout, "brand", "fr_FR", `{"footer":"Au revoir"}`, now)
		promoteTranslation(t, db, tn.A, store.TranslationWorkflow, "a-first", "fr_FR", `{"hi":"Salut"}`, now)
		promoteTranslation(t, db, tn.B, store.TranslationWorkflow, "b-second", "fr_FR", `{"hi":"Vieux"}`, now)
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
		require.Equal(t, []string{"brand", "a-first", "b-second", "c-third"}, seen, "three resources were written before the failure")
		after, err := db.EnvironmentResources(t.Context(), tn.B)
		require.NoError(t, err)
		require.Equal(t, before, after, "the failed publish changed nothing")
		_, err = db.WorkflowGet(t.Context(), tn.B, "a-first")
		require.ErrorIs(t, err, store.ErrNotFound, "not even through the workflow cache")
		_, err = db.LayoutGet(t.Context(), tn.B, "brand")
		require.ErrorIs(t, err, store.ErrNotFound)
		tr, err := db.TranslationGet(t.Context(), &store.TranslationKey{Scope: tn.B, ResourceType: store.TranslationWorkflow,
			ResourceID: "b-second", Locale: "fr_FR"})
		require.NoError(t, err)
		require.JSONEq(t, `{"hi":"Vieux"}`, string(tr.Content), "the target's translations are as they were")

		_, err = db.EnvironmentPublish(t.Context(), &store.PublishParams{Source: tn.A, Target: tn.B, Now: tn.Clock.Advance(time.Minute)})
		require.NoError(t, err)
		require.Empty(t, differing(t, db, tn.A, tn.B))
	})
}

func promoteLayout(t *testing.T, db *sqlstore.DB, s store.Scope, key string, at time.Time) store.Layout {
	t.Helper()
	l := store.Layout{ID: id.NewAt(at), OrganizationID: s.OrganizationID, EnvironmentID: s.EnvironmentID, Key: key, Name: "Layout " + key,
		IsTranslationEnabled: true, ControlValues: store.JSON(`{"email":{"body":"<html><body>{{content}} {{t.footer}}</body></html>","editorType":"html"}}`),
		CreatedAt: at, UpdatedAt: at}
	require.NoError(t, db.LayoutCreate(t.Context(), &l))
	return l
}

func promoteTranslation(t *testing.T, db *sqlstore.DB, s store.Scope, typ, res, locale, content string, at time.Time) {
	t.Helper()
	_, err := db.TranslationUpsert(t.Context(), &store.TranslationUpsertParams{TranslationKey: store.TranslationKey{Scope: s,
		ResourceType: typ, ResourceID: res, Locale: locale}, Content: store.JSON(content), Now: at})
	require.NoError(t, err)
}

// translationsIn lists an environment's translations as "type/id/locale=content".
func translationsIn(t *testing.T, db *sqlstore.DB, s store.Scope, locales ...string) []string {
	t.Helper()
	var out []string
	for _, l := range locales {
		list, err := db.TranslationListLocale(t.Context(), &store.TranslationKey{Scope: s, Locale: l})
		require.NoError(t, err)
		for _, tr := range list {
			out = append(out, tr.ResourceType+"/"+tr.ResourceID+"/"+tr.Locale+"="+string(tr.Content))
		}
	}
	return out
}

// TestEnvironmentPublishLayoutsAndTranslations: layouts promote (created,
// updated, deleted; the target's default is its own) before workflows, and
// the translations of workflows and layouts go with them (locales replaced,
// added, removed); publishing twice changes nothing the second time.
func TestEnvironmentPublishLayoutsAndTranslations(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		tn := setup(t, db)
		now := tn.Clock.Now()
		promoteLayout(t, db, tn.B, "prod-default", now) // the target's default, not in the source
		srcBrand := promoteLayout(t, db, tn.A, "brand", now)
		srcPlain := promoteLayout(t, db, tn.A, "plain", now)
		promoteTranslation(t, db, tn.A, store.TranslationLayout, "plain", "en_US", `{"footer":"Bye"}`, now)
		promoteWorkflow(t, db, tn.A, "welcome", "{{t.hi}}", now)
		promoteWorkflow(t, db, tn.B, "welcome", "{{t.hi}}", now)
		promoteTranslation(t, db, tn.A, store.TranslationWorkflow, "welcome", "en_US", `{"hi":"Hi"}`, now)
		promoteTranslation(t, db, tn.A, store.TranslationWorkflow, "welcome", "fr_FR", `{"hi":"Salut"}`, now)
		promoteTranslation(t, db, tn.B, store.TranslationWorkflow, "welcome", "fr_FR", `{"hi":"Vieux"}`, now)
		promoteTranslation(t, db, tn.B, store.TranslationWorkflow, "welcome", "de_DE", `{"hi":"Hallo"}`, now)
		promoteTranslation(t, db, tn.A, store.TranslationLayout, "brand", "fr_FR", `{"footer":"Au revoir"}`, now)

		res, err := db.EnvironmentResources(ctx, tn.A)
		require.NoError(t, err)
		var kinds []string
		for _, r := range res {
			kinds = append(kinds, r.Kind+":"+r.Key)
		}
		require.Equal(t, []string{"layout:brand", "layout:plain", "workflow:welcome"}, kinds, "layouts before workflows")
		require.Equal(t, store.PartTranslations, res[0].Parts[0].Kind)
		require.JSONEq(t, `{"fr_FR":{"footer":"Au revoir"}}`, string(res[0].Parts[0].Content))

		pub, err := db.EnvironmentPublish(ctx, &store.PublishParams{Source: tn.A, Target: tn.B, Now: tn.Clock.Advance(time.Minute)})
		require.NoError(t, err)
		var did []string
		for _, p := range pub {
			did = append(did, p.Kind+":"+p.Key+":"+p.Action)
		}
		require.Equal(t, []string{"layout:brand:created", "layout:plain:created", "layout:prod-default:deleted",
			"workflow:welcome:updated"}, did)
		require.Empty(t, differing(t, db, tn.A, tn.B))
		brand, err := db.LayoutGet(ctx, tn.B, "brand")
		require.NoError(t, err)
		require.NotEqual(t, srcBrand.ID, brand.ID)
		require.True(t, brand.IsTranslationEnabled)
		require.JSONEq(t, string(srcBrand.ControlValues), string(brand.ControlValues))
		plain, err := db.LayoutGet(ctx, tn.B, "plain")
		require.NoError(t, err)
		require.True(t, brand.IsDefault, "the source's default is the target's")
		require.False(t, plain.IsDefault)
		_, err = db.LayoutGet(ctx, tn.B, "prod-default")
		require.ErrorIs(t, err, store.ErrNotFound)
		all := []string{"en_US", "fr_FR", "de_DE"}
		require.Equal(t, translationsIn(t, db, tn.A, all...), translationsIn(t, db, tn.B, all...),
			"the workflow's locales replaced, added and removed; the layout's copied")

		// Twice: nothing to do, nothing changes.
		before, err := db.EnvironmentResources(ctx, tn.B)
		require.NoError(t, err)
		pub, err = db.EnvironmentPublish(ctx, &store.PublishParams{Source: tn.A, Target: tn.B, Now: tn.Clock.Advance(time.Minute)})
		require.NoError(t, err)
		require.Empty(t, pub)
		after, err := db.EnvironmentResources(ctx, tn.B)
		require.NoError(t, err)
		require.Equal(t, before, after)

		// A translation changed in the source: its resource differs, and Only publishes it.
		promoteTranslation(t, db, tn.A, store.TranslationLayout, "brand", "fr_FR", `{"footer":"À bientôt"}`, tn.Clock.Now())
		require.Equal(t, []string{"brand"}, differing(t, db, tn.A, tn.B))
		pub, err = db.EnvironmentPublish(ctx, &store.PublishParams{Source: tn.A, Target: tn.B,
			Only: []store.ResourceRef{{Kind: store.ResourceLayout, Key: "brand"}}, Now: tn.Clock.Advance(time.Minute)})
		require.NoError(t, err)
		require.Len(t, pub, 1)
		require.Equal(t, store.Published{ResourceRef: store.ResourceRef{Kind: "layout", Key: "brand"}, Name: "Layout brand",
			Action: "updated", TargetID: brand.ID}, pub[0])
		require.Empty(t, differing(t, db, tn.A, tn.B))

		// A layout deleted in the source goes from the target with its translations.
		require.Contains(t, translationsIn(t, db, tn.B, "en_US"), `layout/plain/en_US={"footer":"Bye"}`)
		require.NoError(t, db.LayoutDelete(ctx, &store.LayoutDeleteParams{Scope: tn.A, ID: srcPlain.ID, Now: tn.Clock.Now()}))
		_, err = db.EnvironmentPublish(ctx, &store.PublishParams{Source: tn.A, Target: tn.B, Now: tn.Clock.Advance(time.Minute)})
		require.NoError(t, err)
		_, err = db.LayoutGet(ctx, tn.B, "plain")
		require.ErrorIs(t, err, store.ErrNotFound)
		require.NotContains(t, translationsIn(t, db, tn.B, "en_US"), `layout/plain/en_US={"footer":"Bye"}`)
		require.Equal(t, translationsIn(t, db, tn.A, all...), translationsIn(t, db, tn.B, all...))
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
