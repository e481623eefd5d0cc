package sqlstore

import (
	"context"
	"database/sql"

	"github.com/herald-notify/herald/internal/store"
)

var _ store.Translations = (*DB)(nil)

const translationCols = "resource_type, resource_id, locale, content, created_at, updated_at"

func scanTranslation(r rowScanner) (store.Translation, error) {
	var t store.Translation
	var content string
	var created, updated int64
	if err := r.Scan(&t.ResourceType, &t.ResourceID, &t.Locale, &content, &created, &updated); err != nil {
		return t, notFound(err)
	}
	t.Content = store.JSON(content)
	t.CreatedAt, t.UpdatedAt = fromMS(created), fromMS(updated)
	return t, nil
}

// TranslationUpsert implements store.Translations: one statement, so that
// concurrent uploads of one locale leave one row.
func (db *DB) TranslationUpsert(ctx context.Context, p *store.TranslationUpsertParams) (store.Translation, error) {
	return execRow(ctx, db, scanTranslation, "INSERT INTO translations (environment_id, "+translationCols+")"+
		" VALUES ($1, $2, $3, $4, $5, $6, $6) ON CONFLICT (environment_id, resource_type, resource_id, locale)"+
		" DO UPDATE SET content = excluded.content, updated_at = excluded.updated_at RETURNING "+translationCols,
		p.EnvironmentID, p.ResourceType, p.ResourceID, p.Locale, string(orJSON(p.Content, "{}")), ms(p.Now))
}

// TranslationGet implements store.Translations.
func (db *DB) TranslationGet(ctx context.Context, k *store.TranslationKey) (store.Translation, error) {
	return scanTranslation(db.r.QueryRowContext(ctx, "SELECT "+translationCols+" FROM translations"+
		" WHERE environment_id = $1 AND resource_type = $2 AND resource_id = $3 AND locale = $4",
		k.EnvironmentID, k.ResourceType, k.ResourceID, k.Locale))
}

// TranslationDelete implements store.Translations.
func (db *DB) TranslationDelete(ctx context.Context, k *store.TranslationKey) error {
	var a args
	q := "DELETE FROM translations WHERE environment_id = " + a.add(k.EnvironmentID) + " AND resource_type = " +
		a.add(k.ResourceType) + " AND resource_id = " + a.add(k.ResourceID)
	if k.Locale != "" {
		q += " AND locale = " + a.add(k.Locale)
	}
	res, err := db.exec(ctx, q, a...)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return store.ErrNotFound
	}
	return nil
}

// TranslationMove implements store.Translations, in one transaction.
func (db *DB) TranslationMove(ctx context.Context, k *store.TranslationKey, to string) error {
	if to == k.ResourceID {
		return nil
	}
	return db.inTxFn(ctx, func(q querier) error {
		if _, err := q.ExecContext(ctx, "DELETE FROM translations WHERE environment_id = $1 AND resource_type = $2 AND resource_id = $3",
			k.EnvironmentID, k.ResourceType, to); err != nil {
			return err
		}
		_, err := q.ExecContext(ctx, "UPDATE translations SET resource_id = $1 WHERE environment_id = $2 AND resource_type = $3"+
			" AND resource_id = $4", to, k.EnvironmentID, k.ResourceType, k.ResourceID)
		return err
	})
}

// TranslationLocales implements store.Translations.
func (db *DB) TranslationLocales(ctx context.Context, k *store.TranslationKey) ([]store.Translation, error) {
	rows, err := db.r.QueryContext(ctx, "SELECT resource_type, resource_id, locale, '', created_at, updated_at"+
		" FROM translations WHERE environment_id = $1 AND resource_type = $2 AND resource_id = $3 ORDER BY locale",
		k.EnvironmentID, k.ResourceType, k.ResourceID)
	out, err := scanAll(rows, err, scanTranslation)
	for i := range out {
		out[i].Content = nil
	}
	return out, err
}

// TranslationListLocale implements store.Translations.
func (db *DB) TranslationListLocale(ctx context.Context, k *store.TranslationKey) ([]store.Translation, error) {
	rows, err := db.r.QueryContext(ctx, "SELECT "+translationCols+" FROM translations WHERE environment_id = $1"+
		" AND locale = $2 ORDER BY resource_type, resource_id", k.EnvironmentID, k.Locale)
	return scanAll(rows, err, scanTranslation)
}

// TranslationDefaultLocale implements store.Translations.
func (db *DB) TranslationDefaultLocale(ctx context.Context, scope store.Scope) (string, error) {
	var locale string
	err := db.r.QueryRowContext(ctx, "SELECT default_locale FROM organizations WHERE id = $1", scope.OrganizationID).Scan(&locale)
	if err == sql.ErrNoRows || locale == "" {
		return store.DefaultLocale, nil
	}
	return locale, err
}

// TranslationSetFor implements store.Translations.
func (db *DB) TranslationSetFor(ctx context.Context, k *store.TranslationKey) (store.TranslationSet, error) {
	const of = "FROM translations t WHERE t.environment_id = $1 AND t.resource_type = $2 AND t.resource_id = $3"
	var set store.TranslationSet
	var def sql.NullString
	var locale, fallback sql.NullString
	err := db.r.QueryRowContext(ctx, "SELECT (SELECT o.default_locale FROM organizations o WHERE o.id = $5),"+
		" (SELECT t.content "+of+" AND t.locale = $4),"+
		" (SELECT t.content "+of+" AND t.locale = coalesce((SELECT o.default_locale FROM organizations o WHERE o.id = $5), $6)),"+
		" EXISTS (SELECT 1 "+of+")",
		k.EnvironmentID, k.ResourceType, k.ResourceID, k.Locale, k.OrganizationID, store.DefaultLocale).
		Scan(&def, &locale, &fallback, &set.Any)
	if err != nil {
		return set, err
	}
	set.DefaultLocale = store.DefaultLocale
	if def.Valid && def.String != "" {
		set.DefaultLocale = def.String
	}
	if locale.Valid {
		set.Locale = store.JSON(locale.String)
	}
	if fallback.Valid {
		set.Default = store.JSON(fallback.String)
	}
	return set, nil
}
