package sqlstore

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"time"

	"github.com/herald-notify/herald/internal/store"
)

// Translations promote with their workflow or layout: a resource's
// translations are one part of it (store.PartTranslations, after its
// steps) holding every locale's content, so that a publish of the resource
// replaces the target's translations of it by the source's, and a resource
// whose translations differ differs.

// translationsKey is the Key of a resource's translations part.
const translationsKey = "translations"

// translationParts reads an environment's translations of one resource
// type as parts, by resource id (workflowId or layoutId).
func translationParts(ctx context.Context, q querier, environmentID, resourceType string) (map[string]store.ResourcePart, error) {
	rows, err := q.QueryContext(ctx, "SELECT "+translationCols+" FROM translations WHERE environment_id = $1"+
		" AND resource_type = $2 ORDER BY resource_id, locale", environmentID, resourceType)
	list, err := scanAll(rows, err, scanTranslation)
	if err != nil {
		return nil, err
	}
	byResource := map[string]map[string]json.RawMessage{}
	for _, t := range list {
		if byResource[t.ResourceID] == nil {
			byResource[t.ResourceID] = map[string]json.RawMessage{}
		}
		byResource[t.ResourceID][t.Locale] = json.RawMessage(orJSON(t.Content, "{}"))
	}
	out := make(map[string]store.ResourcePart, len(byResource))
	for res, locales := range byResource {
		out[res] = store.ResourcePart{Kind: store.PartTranslations, Key: translationsKey, Name: "Translations",
			Content: canonical(locales)}
	}
	return out, nil
}

// withTranslations adds r's translations part when it has translations.
func withTranslations(r store.Resource, parts map[string]store.ResourcePart) store.Resource {
	if p, ok := parts[r.Key]; ok {
		r.Parts = append(r.Parts, p)
	}
	return r
}

// translationsOf returns the locales' contents of a resource's
// translations part (none when it has none).
func translationsOf(r *store.Resource) map[string]json.RawMessage {
	if r == nil {
		return nil
	}
	for _, p := range r.Parts {
		if p.Kind == store.PartTranslations {
			var m map[string]json.RawMessage
			_ = json.Unmarshal(p.Content, &m)
			return m
		}
	}
	return nil
}

// publishTranslations makes the target's translations of a resource the
// source's: src nil (the resource deleted) deletes them. A locale the
// target has already keeps its createdAt.
func publishTranslations(ctx context.Context, q querier, target store.Scope, resourceType string, src, dst *store.Resource, now time.Time) error {
	key := dst
	if src != nil {
		key = src
	}
	locales := translationsOf(src)
	// Locales the source lacks go; the others are replaced.
	var a args
	del := "DELETE FROM translations WHERE environment_id = " + a.add(target.EnvironmentID) + " AND resource_type = " +
		a.add(resourceType) + " AND resource_id = " + a.add(key.Key)
	if len(locales) > 0 {
		del += " AND locale NOT IN ("
		i := 0
		for l := range locales {
			if i > 0 {
				del += ", "
			}
			del += a.add(l)
			i++
		}
		del += ")"
	}
	if _, err := q.ExecContext(ctx, del, a...); err != nil {
		return err
	}
	for _, l := range slices.Sorted(maps.Keys(locales)) {
		content := locales[l]
		if _, err := q.ExecContext(ctx, "INSERT INTO translations (environment_id, "+translationCols+")"+
			" VALUES ($1, $2, $3, $4, $5, $6, $6) ON CONFLICT (environment_id, resource_type, resource_id, locale)"+
			" DO UPDATE SET content = excluded.content, updated_at = excluded.updated_at"+
			" WHERE translations.content <> excluded.content",
			target.EnvironmentID, resourceType, key.Key, l, string(content), ms(now)); err != nil {
			return err
		}
	}
	return nil
}
