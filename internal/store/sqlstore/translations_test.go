package sqlstore_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/herald-notify/herald/internal/store"
	"github.com/herald-notify/herald/internal/store/sqlstore"
	"github.com/herald-notify/herald/internal/testdb"
)

func TestTranslationStore(t *testing.T) {
	t.Parallel()
	testdb.ForEach(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		tn := setup(t, db)
		now := base.Add(time.Hour)
		key := func(s store.Scope, locale string) *store.TranslationKey {
			return &store.TranslationKey{Scope: s, ResourceType: store.TranslationWorkflow, ResourceID: "welcome", Locale: locale}
		}
		up := func(s store.Scope, locale, content string, at time.Time) store.Translation {
			tr, err := db.TranslationUpsert(ctx, &store.TranslationUpsertParams{TranslationKey: *key(s, locale),
				Content: store.JSON(content), Now: at})
			require.NoError(t, err)
			return tr
		}

		first := up(tn.A, "fr_FR", `{"hi":"Bonjour"}`, now)
		require.Equal(t, "fr_FR", first.Locale)
		require.True(t, first.CreatedAt.Equal(now))
		again := up(tn.A, "fr_FR", `{"hi":"Salut"}`, now.Add(time.Minute))
		require.True(t, again.CreatedAt.Equal(now), "a replacement keeps its creation time")
		require.True(t, again.UpdatedAt.Equal(now.Add(time.Minute)))
		got, err := db.TranslationGet(ctx, key(tn.A, "fr_FR"))
		require.NoError(t, err)
		require.JSONEq(t, `{"hi":"Salut"}`, string(got.Content))
		up(tn.A, "en_US", `{"hi":"Hello"}`, now)

		// Another environment sees none of it.
		_, err = db.TranslationGet(ctx, key(tn.B, "fr_FR"))
		require.ErrorIs(t, err, store.ErrNotFound)
		require.ErrorIs(t, db.TranslationDelete(ctx, key(tn.B, "")), store.ErrNotFound)
		list, err := db.TranslationLocales(ctx, key(tn.B, ""))
		require.NoError(t, err)
		require.Empty(t, list)

		list, err = db.TranslationLocales(ctx, key(tn.A, ""))
		require.NoError(t, err)
		require.Len(t, list, 2)
		require.Equal(t, []string{"en_US", "fr_FR"}, []string{list[0].Locale, list[1].Locale})
		byLocale, err := db.TranslationListLocale(ctx, &store.TranslationKey{Scope: tn.A, Locale: "fr_FR"})
		require.NoError(t, err)
		require.Len(t, byLocale, 1)
		require.JSONEq(t, `{"hi":"Salut"}`, string(byLocale[0].Content))

		def, err := db.TranslationDefaultLocale(ctx, tn.A)
		require.NoError(t, err)
		require.Equal(t, "en_US", def)
		set, err := db.TranslationSetFor(ctx, key(tn.A, "fr_FR"))
		require.NoError(t, err)
		require.True(t, set.Any)
		require.Equal(t, "en_US", set.DefaultLocale)
		require.JSONEq(t, `{"hi":"Salut"}`, string(set.Locale))
		require.JSONEq(t, `{"hi":"Hello"}`, string(set.Default))
		set, err = db.TranslationSetFor(ctx, key(tn.A, "xx_YY"))
		require.NoError(t, err)
		require.Nil(t, set.Locale)
		require.JSONEq(t, `{"hi":"Hello"}`, string(set.Default))
		set, err = db.TranslationSetFor(ctx, key(tn.B, "fr_FR"))
		require.NoError(t, err)
		require.False(t, set.Any)
		require.Nil(t, set.Default)

		// An organization's own default locale is the fallback.
		exec(t, db, "UPDATE organizations SET default_locale = 'fr_FR' WHERE id = $1", tn.Org.ID)
		set, err = db.TranslationSetFor(ctx, key(tn.A, "de_DE"))
		require.NoError(t, err)
		require.Equal(t, "fr_FR", set.DefaultLocale)
		require.JSONEq(t, `{"hi":"Salut"}`, string(set.Default))

		// A renamed resource keeps its translations.
		require.NoError(t, db.TranslationMove(ctx, key(tn.A, ""), "welcome-2"))
		moved, err := db.TranslationLocales(ctx, &store.TranslationKey{Scope: tn.A, ResourceType: store.TranslationWorkflow, ResourceID: "welcome-2"})
		require.NoError(t, err)
		require.Len(t, moved, 2)
		require.NoError(t, db.TranslationMove(ctx, &store.TranslationKey{Scope: tn.A, ResourceType: store.TranslationWorkflow,
			ResourceID: "welcome-2"}, "welcome"))

		require.NoError(t, db.TranslationDelete(ctx, key(tn.A, "fr_FR")))
		require.ErrorIs(t, db.TranslationDelete(ctx, key(tn.A, "fr_FR")), store.ErrNotFound)
		require.NoError(t, db.TranslationDelete(ctx, key(tn.A, "")))
		require.ErrorIs(t, db.TranslationDelete(ctx, key(tn.A, "")), store.ErrNotFound)
	})
}
