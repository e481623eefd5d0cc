package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/herald-notify/herald/internal/store"
)

// Promotion of an environment's resources into another environment of its
// organization (diff and publish). Each kind of resource has a promoter:
// how to read an environment's resources of that kind in their comparable
// form, and how to write one into the target. Adding a kind (layouts,
// translations) is a promoter in its own file and one entry in promoters,
// with its name in store.ResourceKinds.

// promoter reads and writes the resources of one kind.
type promoter interface {
	// resources returns an environment's resources of the kind.
	resources(ctx context.Context, q querier, environmentID string) ([]store.Resource, error)
	// publish writes src into the target environment, over dst when the
	// target has it (nil otherwise), and returns the record's id there;
	// src nil deletes dst.
	publish(ctx context.Context, db *DB, q querier, target store.Scope, src, dst *store.Resource, now time.Time) (string, error)
}

// promoters are the kinds of resource a publish promotes, by name.
var promoters = map[string]promoter{
	store.ResourceLayout:   layoutPromoter{},
	store.ResourceWorkflow: workflowPromoter{},
}

// promoteFaults makes a publish into a target environment fail before it
// writes a resource (tests of atomicity; by target environment id).
var promoteFaults sync.Map // string → func(store.ResourceRef) error

// EnvironmentResources implements store.Promotion.
func (db *DB) EnvironmentResources(ctx context.Context, scope store.Scope) ([]store.Resource, error) {
	return environmentResources(ctx, db.r, scope.EnvironmentID)
}

func environmentResources(ctx context.Context, q querier, environmentID string) ([]store.Resource, error) {
	var out []store.Resource
	for _, kind := range store.ResourceKinds {
		p, ok := promoters[kind]
		if !ok {
			return nil, fmt.Errorf("sqlstore: no promoter for resource kind %q", kind)
		}
		rs, err := p.resources(ctx, q, environmentID)
		if err != nil {
			return nil, fmt.Errorf("sqlstore: %s resources: %w", kind, err)
		}
		slices.SortFunc(rs, func(a, b store.Resource) int { return cmp.Compare(a.Key, b.Key) })
		out = append(out, rs...)
	}
	return out, nil
}

// EnvironmentPublish implements store.Promotion.
func (db *DB) EnvironmentPublish(ctx context.Context, p *store.PublishParams) ([]store.Published, error) {
	defer db.workflows.clear()
	only := map[store.ResourceRef]bool{}
	for _, r := range p.Only {
		only[r] = true
	}
	var out []store.Published
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		out = nil
		for _, s := range []store.Scope{p.Source, p.Target} {
			var n int
			if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM environments WHERE id = $1 AND organization_id = $2"+
				" AND deleted_at IS NULL", s.EnvironmentID, s.OrganizationID).Scan(&n); err != nil {
				return err
			}
			if n == 0 {
				return store.ErrNotFound
			}
		}
		src, err := environmentResources(ctx, tx, p.Source.EnvironmentID)
		if err != nil {
			return err
		}
		dst, err := environmentResources(ctx, tx, p.Target.EnvironmentID)
		if err != nil {
			return err
		}
		fault, _ := promoteFaults.Load(p.Target.EnvironmentID)
		for _, pair := range store.PairResources(src, dst) {
			s, d := pair[0], pair[1]
			r := cmp.Or(s, d)
			ref := store.ResourceRef{Kind: r.Kind, Key: r.Key}
			if len(only) > 0 && !only[ref] || s != nil && d != nil && s.Same(*d) {
				continue
			}
			if f, ok := fault.(func(store.ResourceRef) error); ok {
				if err := f(ref); err != nil {
					return err
				}
			}
			targetID, err := promoters[r.Kind].publish(ctx, db, tx, p.Target, s, d, p.Now)
			if err != nil {
				return fmt.Errorf("sqlstore: publishing %s %q: %w", r.Kind, r.Key, err)
			}
			action := store.PromoteUpdated
			switch {
			case d == nil:
				action = store.PromoteCreated
			case s == nil:
				action = store.PromoteDeleted
			}
			out = append(out, store.Published{ResourceRef: ref, Name: r.Name, Action: action, TargetID: targetID})
		}
		noteResult(tx, out)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// canonical is v as JSON with sorted keys (nil for a value that does not encode).
func canonical(v any) store.JSON {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

// decoded is a stored JSON value decoded (nil when empty or invalid).
func decoded(raw store.JSON) any {
	var v any
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &v)
	}
	return v
}
